"""The persistent Dagster instance `ledger up` runs, under `$LEDGER_HOME/dagster` (DAGSTER_HOME).

    dagster_home = prepare_instance(settings)   # dagster.yaml and workspace.yaml, then run

`dagster.yaml` is copied from the one the repository ships (dagster_project/instance/): SQLite
storage in the same folder by default, PostgreSQL when `LEDGER_DAGSTER_POSTGRES_URL` is set. The
copy starts with `MARKER`; while it does, `ledger up` keeps it in step with the shipped one and
the configuration; delete that line to keep a file of your own (it is then left alone).
`workspace.yaml` names the code location with this checkout and this interpreter: it is written
at every start.
"""

from __future__ import annotations

import io
import sys
from contextlib import redirect_stdout
from pathlib import Path

import yaml

from ledger.core.durable import write_text_atomically
from ledger.core.settings import REPO_ROOT, Settings

SHIPPED = REPO_ROOT / "dagster_project" / "instance"
SQLITE_INSTANCE = SHIPPED / "dagster.yaml"
POSTGRES_INSTANCE = SHIPPED / "dagster.postgres.yaml"
CODE_LOCATION = "dagster_project.definitions"
MARKER = (
    "# Written by `ledger up` from dagster_project/instance/{name}: delete this line to keep edits."
)


def instance_template(settings: Settings) -> Path:
    """The shipped instance file the configuration selects."""
    return POSTGRES_INSTANCE if settings.dagster_postgres_url else SQLITE_INSTANCE


def instance_text(settings: Settings) -> str:
    template = instance_template(settings)
    return MARKER.format(name=template.name) + "\n" + template.read_text(encoding="utf-8")


def workspace_text() -> str:
    """One code location, loaded from this checkout with this interpreter (the daemon and the
    webserver start it as a code server of their own)."""
    location = {
        "module_name": CODE_LOCATION,
        "working_directory": str(REPO_ROOT),
        "executable_path": sys.executable,
        "location_name": "ledger",
    }
    return yaml.safe_dump({"load_from": [{"python_module": location}]}, sort_keys=False)


def prepare_instance(settings: Settings) -> Path:
    """Write the instance's `dagster.yaml` (unless the user took it over) and `workspace.yaml`;
    return the folder to use as DAGSTER_HOME."""
    home = settings.dagster_home
    home.mkdir(parents=True, exist_ok=True)
    instance = home / "dagster.yaml"
    ours = not instance.exists() or instance.read_text(encoding="utf-8").startswith("# Written by")
    if ours:
        write_text_atomically(instance, instance_text(settings))
    write_text_atomically(home / "workspace.yaml", workspace_text())
    create_storage(home)
    return home


def create_storage(dagster_home: Path) -> None:
    """Create (or upgrade) the instance's storage before any service opens it: the daemon and
    the webserver creating a fresh SQLite storage at the same moment leave it with two schema
    versions, which no code location can load. The PostgreSQL URL comes from the environment."""
    from dagster import DagsterInstance

    # Dagster reports each storage it updated on stdout; `ledger up` says what it starts instead.
    with redirect_stdout(io.StringIO()), DagsterInstance.from_config(str(dagster_home)) as instance:
        instance.upgrade(print_fn=lambda *_: None)
