"""The models of the last build, as dbt's manifest describes them: read by the refresh planner (the
published weeks of each model) and by Spark's publish (the typed columns of a mart it wrote no
file for)."""

from __future__ import annotations

import json

from ledger.core.settings import Settings


def built_models(settings: Settings) -> dict[str, dict]:
    """The model nodes of the last build's dbt manifest, by relation name (alias, else name);
    empty when there is no readable manifest."""
    try:
        nodes = json.loads((settings.dbt_target_dir / "manifest.json").read_text())["nodes"]
        return {
            node.get("alias") or node["name"]: node
            for node in nodes.values()
            if node.get("resource_type") == "model"
        }
    except (OSError, ValueError, KeyError, AttributeError, TypeError):
        return {}
