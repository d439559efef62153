"""The metering contract (SPEC 3 and 9), once: `events` holds the pydantic models every other form
is derived from (JSON Schema, raw columns, dbt source columns, the ingest's bulk validation SQL in
`fields`), `verdict` is pydantic's judgement of one line, and `exact_json` reads numbers as the text
they were sent as.

The modules not named above:

- `duplicate_keys`: a key repeated in one JSON object is `duplicate_key` (issue 26, SPEC 3), decided
  by one SQL rule.
"""
