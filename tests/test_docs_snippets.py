"""What the docs and the README tell a user to type or copy works (issue 38): every `ledger ...`
command they show (in code spans, shell blocks and systemd units) parses with the real `ledger`
command, placeholders filled with values of their kind; every `LEDGER_*` variable they name is a
setting; every Python snippet compiles, its imports resolve and the keyword arguments it passes
to our classes exist; every YAML and CSV snippet loads with the loader that reads such a file.

Commands are parsed, not run (their behaviour is each command's own tests'): a renamed option, a
dropped command or an argument of the wrong kind (`--out DIR` where a file is taken) fails here.
"""

from __future__ import annotations

import ast
import csv
import importlib
import inspect
import io
import re
import shlex
from pathlib import Path

import click
import pytest
import yaml

from ledger.commands.cli import main
from ledger.core.settings import ENVIRONMENT, REPO_ROOT

PAGES = [*sorted((REPO_ROOT / "docs").glob("*.md")), REPO_ROOT / "README.md"]
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`(ledger [^`]+)`")
# Variables the docs name that are not settings, each for a reason.
NOT_SETTINGS = {
    "LEDGER_PROXY_SECRET": "the access file's example names it (proxy_secret_env)",
    "LEDGER_SPARK_LOG_LEVEL": "read by Spark's log configuration, not by Settings",
    "LEDGER_TOKEN_GW_CN_EAST_1": "the collector config's example token variable",
}


def _blocks(*langs: str) -> list[tuple[str, str]]:
    """(page, body) of every fenced block in one of `langs`."""
    return [
        (page.name, found["body"])
        for page in PAGES
        for found in FENCE.finditer(page.read_text())
        if found["lang"] in langs
    ]


def _documented_commands() -> list[tuple[str, str]]:
    """(page, command line) of every `ledger ...` a page shows."""
    found: list[tuple[str, str]] = []
    for page in PAGES:
        text = page.read_text()
        found += [(page.name, span.replace("\\|", "|")) for span in CODE_SPAN.findall(text)]
        for fence in FENCE.finditer(text):
            for line in fence["body"].splitlines():
                command = _command_of(fence["lang"], line)
                if command:
                    found.append((page.name, command))
    # `ledger <command> --help` is the generic form, not a command.
    return sorted({(page, line) for page, line in found if "<command>" not in line})


def _command_of(lang: str, line: str) -> str | None:
    """The `ledger ...` a line of a shell block runs (after any `VAR=value`), or of a systemd
    unit's ExecStart; None for any other line."""
    if lang in ("sh", "bash"):
        words = line.split(" #")[0].strip()
        words = re.sub(r"^(\w+=\S+\s+)+", "", words)
        return words if words.startswith("ledger ") or words == "ledger" else None
    if lang == "ini" and line.startswith("ExecStart="):
        found = re.search(r"/ledger(\s.*)$", line)
        return f"ledger{found[1]}" if found else None
    return None


def _placeholders(tmp: Path) -> dict[str, str]:
    """A value of the right kind for each placeholder the docs write."""
    (tmp / "dir").mkdir(exist_ok=True)
    for name in ("f.yaml", "proposed.yaml", "bill.csv", "path.jsonl"):
        (tmp / name).write_text("")
    return {
        "D": "2026-11-01",
        "YYYY-MM": "2026-11",
        "N": "2",
        "T": "acme-telecom",
        "S": "7",
        "X": "2",
        "M": "30",
        "DIR": str(tmp / "dir"),
        "F": str(tmp / "f.yaml"),
        "F.csv": str(tmp / "out.csv"),
        "F.md": str(tmp / "review.md"),
        "STEM": str(tmp / "stem"),
        "SRC": str(tmp / "dir"),
        "DEST": str(tmp / "backup"),
        "PATH": str(tmp / "path.jsonl"),
        "PATH...": str(tmp / "path.jsonl"),
        "PROPOSED.yaml": str(tmp / "proposed.yaml"),
        "BILL.csv": str(tmp / "bill.csv"),
        "CANDIDATE": "candidate",
        "FILE": str(tmp / "f.yaml"),
    }


def _variants(line: str) -> list[list[str]]:
    """The argument lists a documented line stands for: brackets dropped, `...` dropped, each
    `a|b` alternative taken in turn (`.parquet` after `F.csv` meaning `F.parquet`)."""
    tokens = [t for t in shlex.split(line.replace("[", " ").replace("]", " ")) if t != "..."]
    variants: list[list[str]] = [[]]
    for token in tokens:
        if "|" in token:
            first, *others = token.split("|")
            choices = [first] + [
                first.rsplit(".", 1)[0] + other if other.startswith(".") else other
                for other in others
            ]
        else:
            choices = [token]
        variants = [[*variant, choice] for variant in variants for choice in choices]
    return variants


def _parse(arguments: list[str]) -> None:
    """Resolve the command and parse its options and arguments as `ledger` would, without
    running it; raises click's error when they do not parse."""
    command: click.Command = main
    path = ["ledger"]
    while isinstance(command, click.Group) and arguments and not arguments[0].startswith("-"):
        sub = command.get_command(click.Context(command), arguments[0])
        if sub is None:
            raise click.UsageError(f"no command {' '.join([*path, arguments[0]])!r}")
        path.append(arguments.pop(0))
        command = sub
    if not arguments:
        return  # a command or group named in prose (`ledger replay`): it exists
    try:
        command.make_context(" ".join(path), arguments)
    except click.BadParameter as exc:
        # An example path of the reader's machine (`/etc/voice-ledger/collector.yaml`): of the
        # right kind, only absent here. A path of the wrong kind still fails ("is a directory").
        if "does not exist" not in exc.format_message():
            raise


@pytest.mark.parametrize(("page", "line"), _documented_commands())
def test_every_documented_command_parses(page: str, line: str, tmp_path: Path) -> None:
    values = _placeholders(tmp_path)
    for variant in _variants(line):
        assert variant[0] == "ledger", line
        arguments = [values.get(token, token) for token in variant[1:]]
        try:
            _parse(arguments)
        except click.exceptions.Exit:
            pass  # --help
        except click.ClickException as exc:
            raise AssertionError(
                f"{page}: `{line}` does not parse: {exc.format_message()}"
            ) from exc


def test_the_commands_the_docs_show_cover_every_command():
    """Each command of `ledger` is shown somewhere, so a new one is documented."""
    shown = {" ".join(_variants(line)[0][:3]) for _, line in _documented_commands()}

    def leaves(group: click.Group, prefix: str):
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                yield from leaves(command, f"{prefix} {name}")
            else:
                yield f"{prefix} {name}"

    missing = [
        leaf for leaf in leaves(main, "ledger") if not any(s.startswith(leaf) for s in shown)
    ]
    assert missing == []


def test_every_setting_the_docs_name_is_one():
    named = {v for page in PAGES for v in re.findall(r"\bLEDGER_[A-Z0-9_]+", page.read_text())}
    settings = set(ENVIRONMENT.values())
    assert sorted(named - settings - set(NOT_SETTINGS)) == []
    # ... and each setting is documented.
    assert sorted(settings - named) == []


@pytest.mark.parametrize(("page", "body"), _blocks("python"))
def test_every_python_snippet_compiles_and_calls_our_classes_as_they_are(page: str, body: str):
    tree = compile(body, page, "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    ours: dict[str, object] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ledger"):
            module = importlib.import_module(node.module or "")
            for alias in node.names:
                ours[alias.asname or alias.name] = getattr(module, alias.name)
    assert ours, f"{page}: a snippet that imports nothing of ours"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ours:
            target = ours[node.func.id]
            keywords = {k.arg: None for k in node.keywords if k.arg is not None}
            positional = [None] * len(node.args)
            try:
                inspect.signature(target).bind_partial(*positional, **keywords)  # type: ignore[arg-type]
            except TypeError as exc:
                raise AssertionError(f"{page}: {node.func.id}(...) {exc}") from exc


def test_every_yaml_and_csv_snippet_loads_with_its_reader(tmp_path: Path):
    from ledger.collect.credentials import load_credentials
    from ledger.serving.access_file import load_access

    loaded = []
    for page, body in _blocks("yaml"):
        document = yaml.safe_load(body)
        assert isinstance(document, dict), page
        path = tmp_path / f"{len(loaded)}.yaml"
        path.write_text(body)
        if "sources" in document:  # the collector's config
            environ = {
                name: f"token-{n}" for n, name in enumerate(re.findall(r"\w+_env: (\w+)", body))
            }
            loaded.append(("collector", load_credentials(path, environ=environ)))
        elif "users" in document:  # the boards' access file
            loaded.append(("access", load_access(path)))
        elif "profiles" in document:  # a latency budgets excerpt
            loaded.append(("budgets", document))
        else:
            raise AssertionError(f"{page}: a YAML snippet of no known file: {body[:60]!r}")
    assert sorted(kind for kind, _ in loaded) == ["access", "budgets", "collector"]
    for page, body in _blocks("csv"):
        header = next(csv.reader(io.StringIO(body)))
        reference = {
            path.name: next(csv.reader(path.open()))
            for path in (REPO_ROOT / "data" / "reference").glob("*.csv")
        }
        assert header in reference.values(), (
            f"{page}: a CSV snippet whose header no reference file has"
        )


def test_ledger_help_names_every_setting():
    from click.testing import CliRunner

    shown = " ".join(CliRunner().invoke(main, ["--help"]).output.split())
    assert [name for name in ENVIRONMENT.values() if name not in shown] == []
