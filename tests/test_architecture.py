"""The code's structure, as a newcomer reads it: no import circle between modules (an import inside a
function counts: it only hides the circle), and every package's docstring names each of its
modules, so the map a reader starts from never falls behind."""

from __future__ import annotations

import ast
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ledger", "dashboards", "dagster_project", "benchmarks")


def module_imports(root: Path = REPO_ROOT) -> dict[str, set[str]]:
    """Each module of PACKAGES -> the modules of PACKAGES it imports, wherever in it."""
    paths = {
        ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): path
        for package in PACKAGES
        for path in (root / package).rglob("*.py")
    }
    imports: dict[str, set[str]] = {name: set() for name in paths}
    for name, path in paths.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                named = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                named = [alias.name for alias in node.names]
            else:
                continue
            imports[name] |= {target for target in named if target in paths and target != name}
    return imports


def circles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or round a longer circle
    (Tarjan's strongly connected components of more than one module), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(imports[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(imports):
        if module not in index:
            visit(module)
    return sorted(found)


def test_the_circle_check_finds_a_circle_hidden_in_a_function(tmp_path: Path):
    package = tmp_path / "ledger"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from ledger.b import x\n")
    (package / "b.py").write_text("def x():\n    from ledger.c import y\n")
    (package / "c.py").write_text("import ledger.a\n")
    (package / "d.py").write_text("from ledger import a\n")
    for other in PACKAGES[1:]:
        (tmp_path / other).mkdir()
    assert circles(module_imports(tmp_path)) == [["ledger.a", "ledger.b", "ledger.c"]]


def test_no_two_modules_import_each_other():
    assert circles(module_imports()) == []


def test_every_package_docstring_names_each_of_its_modules():
    missing = {}
    for package in PACKAGES:
        for init in sorted((REPO_ROOT / package).rglob("__init__.py")):
            folder = init.parent
            members = [
                p.stem for p in folder.glob("*.py") if p.stem not in ("__init__", "__main__")
            ]
            members += [p.name for p in folder.iterdir() if (p / "__init__.py").exists()]
            docstring = ast.get_docstring(ast.parse(init.read_text())) or ""
            absent = sorted(m for m in members if f"`{m}`" not in docstring)
            if absent:
                missing[str(folder.relative_to(REPO_ROOT))] = absent
    assert missing == {}
