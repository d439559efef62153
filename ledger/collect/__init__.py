"""Collectors: what real voice stacks already emit, turned into metering contract events (SPEC 9).

One module per stack (`livekit`, `pipecat`, `vapi`, `retell`), the sinks they write to (`sink`) and
the authenticated HTTP collector (`server`). Collectors emit contract events and nothing else; the
ingest applies every contract rule to what they send, as for any landing file.
"""
