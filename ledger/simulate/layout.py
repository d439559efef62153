"""The column layout of simulated events, derived from the contract models (never restated here).

JSON lines carry exactly the fields of their event type, in the model's order. Parquet files carry
the union of all fields (nulls where a field does not apply): integers as Int64, booleans as
Boolean, everything else (timestamps, decimals, enums, labels) as the same strings the JSON carries,
so both formats hold byte-for-byte the same values.
"""

from __future__ import annotations

import types
import typing

import polars as pl

from ledger.contract.events import EVENT_MODELS, EVENT_TYPES


def _polars_type(annotation: object) -> pl.DataType:
    """Int64 for contract integers, Boolean for booleans, String for the rest."""
    if annotation is bool:
        return pl.Boolean()
    if annotation is int:
        return pl.Int64()
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, typing.Annotated):
        args = typing.get_args(annotation)
        candidates = args[:1] if origin is typing.Annotated else args
        for arg in candidates:
            if arg is not type(None):
                found = _polars_type(arg)
                if found != pl.String():
                    return found
    return pl.String()


# The simulated TTS models are billed per character: their `tts.usage` carries no token counts
# (contract v1.2's optional fields), as a producer's TTS that counts none does not.
NOT_SIMULATED: dict[str, tuple[str, ...]] = {"tts.usage": ("input_tokens", "output_audio_tokens")}

# The fields each simulated event type carries, in the contract's order.
EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    event_type: tuple(
        name for name in model.model_fields if name not in NOT_SIMULATED.get(event_type, ())
    )
    for event_type, model in zip(EVENT_TYPES, EVENT_MODELS, strict=True)
}

UNION_SCHEMA: dict[str, pl.DataType] = {}
for _model in EVENT_MODELS:
    for _name, _field in _model.model_fields.items():
        UNION_SCHEMA.setdefault(_name, _polars_type(_field.annotation))

# Integer fields per event type: the targets when a bad row gets a wrong type or a negative value.
INTEGER_FIELDS: dict[str, tuple[str, ...]] = {
    event_type: tuple(name for name in fields if UNION_SCHEMA[name] == pl.Int64())
    for event_type, fields in EVENT_FIELDS.items()
}
