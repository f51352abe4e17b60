"""The package's layering, read from its own source files (every import, those inside functions
included): the layers of `alterflow` import each other one way only, the core imports no Airflow,
no private name is imported across modules, and SQLAlchemy stays inside `alterflow.catalog`."""

from __future__ import annotations

import ast
import pathlib
from collections import defaultdict

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Folder -> the package it installs as (pyproject.toml's package-dir).
FOLDERS = {
    "alterflow": "alterflow",
    "catalog": "alterflow.catalog",
    "expectations": "alterflow.expectations",
    "spark_jobs": "alterflow.spark_jobs",
}


def _modules() -> dict[str, pathlib.Path]:
    found = {}
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = [p for p in path.relative_to(ROOT / folder).with_suffix("").parts if p != "__init__"]
            found[".".join([package, *parts])] = path
    return found


MODULES = _modules()


def _imports(path: pathlib.Path) -> list[tuple[str, list[str]]]:
    """(module, names imported from it) for every absolute import in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, [alias.name for alias in node.names]))
    return found


def _layer(module: str) -> str:
    """`alterflow.load.local_load` -> `store`; a module at the package's top is a layer of its own."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [node, nxt] if nxt in path else [node, nxt]
            if nxt not in state and (found := visit(nxt, [*path, node])):
                return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node, [])):
            return found
    return None


def test_the_layers_import_each_other_one_way():
    graph: dict[str, set[str]] = defaultdict(set)
    why: dict[tuple[str, str], str] = {}
    for module, path in MODULES.items():
        for imported, names in _imports(path):
            # `from alterflow import sql` imports the module alterflow.sql, not the package's own
            # exports (alterflow/__init__.py, the Python API's facade)
            submodules = [f"{imported}.{n}" for n in names if f"{imported}.{n}" in MODULES]
            for target in submodules or [imported]:
                if target in MODULES and _layer(target) != _layer(module):
                    graph[_layer(module)].add(_layer(target))
                    why.setdefault((_layer(module), _layer(target)), f"{module} imports {target}")
    cycle = _cycle(graph)
    assert cycle is None, "import cycle between layers: " + "; ".join(why.get((a, b), f"{a}->{b}") for a, b in zip(cycle, cycle[1:]))


def test_the_cycle_check_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) is not None
    assert _cycle({"a": {"b"}, "b": {"c"}}) is None


def test_only_the_airflow_integration_imports_airflow():
    """`alterflow.airflow` (the plugin, the DAG factories, operators and triggers) is the only layer
    that imports Airflow, and nothing of the core imports it: the CLI, the catalog, the planner and
    the workflow steps run without Airflow installed."""
    offenders = [
        f"{module} imports {imported}"
        for module, path in MODULES.items()
        if _layer(module) != "airflow"
        for imported, _names in _imports(path)
        if imported.split(".")[0] == "airflow" or imported == "alterflow.airflow" or imported.startswith("alterflow.airflow.")
    ]
    assert not offenders


def test_no_private_name_is_imported_across_modules():
    offenders = []
    for base in ("alterflow", "catalog", "expectations", "spark_jobs", "plugins", "dags"):
        for path in (ROOT / base).rglob("*.py"):
            for imported, names in _imports(path):
                if not imported.startswith("alterflow"):
                    continue
                private = [n for n in names if n.startswith("_")] + [p for p in imported.split(".") if p.startswith("_")]
                if private:
                    offenders.append(f"{path.relative_to(ROOT)} imports {private} from {imported}")
    assert not offenders


def test_sqlalchemy_stays_in_the_catalog():
    """No ORM object or session leaves `alterflow.catalog`: nothing else imports SQLAlchemy, but for
    the Schema changes API, which answers a lost catalog connection (SQLAlchemy's OperationalError,
    raised mid-request) with a 503, and `alterflow.airflow.runs`, which queries Airflow's own
    metadata database (its DagRun and XCom models), not the catalog."""
    offenders = [
        f"{module} imports {imported}"
        for module, path in MODULES.items()
        if not module.startswith("alterflow.catalog") and module not in ("alterflow.airflow.web", "alterflow.airflow.runs")
        for imported, _names in _imports(path)
        if imported.split(".")[0] == "sqlalchemy"
    ]
    assert not offenders


# The doors over the engine (`alterflow.engine`): each drives the engine and none imports another,
# but for the Airflow hook, whose `get_conn()` hands out the Python API's connection as every
# provider's hook hands out its service's client (docs/architecture.md).
# The package's facade (`alterflow.connect`, ...) and `alterflow.spark` are the Python API's door.
DOORS = ("cli", "api", "airflow", "spark_jobs")
API_DOOR_MODULES = ("alterflow", "alterflow.spark")
DOOR_TO_DOOR_ALLOWED = {("alterflow.airflow.hooks", "alterflow.api.connection")}


def _door(module: str) -> str | None:
    if module not in MODULES:
        return None
    if module in API_DOOR_MODULES:
        return "api"
    layer = _layer(module)
    return layer if layer in DOORS else None


def _targets(imported: str, names: list[str]) -> list[str]:
    """The modules an import statement loads: `from alterflow import sql` loads alterflow.sql."""
    return [f"{imported}.{n}" for n in names if f"{imported}.{n}" in MODULES] or [imported]


def test_no_door_imports_another_door():
    offenders = []
    for module, path in MODULES.items():
        for imported, names in _imports(path):
            for target in _targets(imported, names):
                door, other = _door(module), _door(target)
                if door and other and door != other and (module, target) not in DOOR_TO_DOOR_ALLOWED:
                    offenders.append(f"{module} imports {target}")
    assert not offenders


def test_the_engine_imports_no_door():
    offenders = [
        f"{module} imports {target}"
        for module, path in MODULES.items()
        if not _door(module)
        for imported, names in _imports(path)
        for target in _targets(imported, names)
        if _door(target)
    ]
    assert not offenders
