"""The collectors: voice stacks, webhooks and the HTTP collector turned into contract events."""
