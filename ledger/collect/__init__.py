"""Collectors: what real voice stacks already emit, turned into metering contract events (SPEC 9).

One module per stack (`livekit`, `pipecat`, `vapi`, `retell`), the sinks they write to (`sink`) and
the authenticated HTTP collector (`server`). Collectors emit contract events and nothing else; the
ingest applies every contract rule to what they send, as for any landing file.

The modules not named above:

- `connections`: slow connections are closed and concurrent ones capped, so no client can hold the
  collector.
- `credentials`: the HTTP collector's credentials: which token is which source, and the webhooks'
  secrets.
- `event_builder`: building contract events: deterministic event ids, RFC 3339 text, exact decimals.
- `metrics`: the HTTP collector's Prometheus metrics (`GET /metrics`, SPEC 14).
- `naming`: which provider and model a collected usage line names (SPEC 9).
"""
