"""The import structure: the import-linter contracts of pyproject.toml hold, and fixed circles stay fixed."""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

REPO = Path(__file__).resolve().parents[2]


def test_the_import_linter_contracts_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.syspath_prepend(str(REPO))
    assert lint_imports(config_filename=str(REPO / "pyproject.toml"), no_cache=True) == 0


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("worldkit", exclude_type_checking_imports=True, cache_dir=None)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("worldkit.store.db", "worldkit.store.revisions"),
        ("worldkit.infoorg.overlays", "worldkit.infoorg.packets"),
        ("worldkit.infoorg.overlays", "worldkit.infoorg.packet_info"),
        ("worldkit.verify.context", "worldkit.verify.tasks"),
        ("worldkit.verify.report", "worldkit.verify.runner"),
    ],
)
def test_no_two_module_circle(graph: grimp.ImportGraph, a: str, b: str) -> None:
    both = graph.direct_import_exists(importer=a, imported=b) and graph.direct_import_exists(importer=b, imported=a)
    assert not both, f"{a} and {b} import each other"


def test_the_model_layer_imports_no_projection_or_task_code(graph: grimp.ImportGraph) -> None:
    for upper in ("worldkit.access", "worldkit.timeline", "worldkit.materialize", "worldkit.overlay", "worldkit.store"):
        chains = graph.find_shortest_chains(importer="worldkit.world", imported=upper, as_packages=True)
        assert not chains, f"worldkit.world imports {upper}: {sorted(chains)[:3]}"




def test_no_import_circle_between_modules(graph: grimp.ImportGraph) -> None:
    """No circle of any length among worldkit's modules (lazy imports inside functions included). A
    package's `__init__` importing its own submodules is not a dependency of those submodules on it."""
    import networkx as nx

    edges = nx.DiGraph()
    for module in graph.modules:
        edges.add_node(module)
        for other in graph.find_modules_directly_imported_by(module):
            if not other.startswith(module + "."):
                edges.add_edge(module, other)
    circles = [sorted(c) for c in nx.strongly_connected_components(edges) if len(c) > 1]
    assert circles == [], f"import circles: {circles}"


def test_every_top_level_package_is_in_the_layer_contract() -> None:
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    layers = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")["layers"]
    named = {part.strip() for layer in layers for part in layer.split("|")}
    packages = {f"worldkit.{p.name}" for p in (REPO / "worldkit").iterdir()
                if (p / "__init__.py").is_file() and not p.name.startswith("_")}
    assert packages - named == set(), "packages missing from the layers contract"


def test_modules_moved_out_of_run_still_import_with_a_deprecation_warning() -> None:
    import importlib
    import sys

    for old, new in [("worldkit.run.judge", "worldkit.grade.judge"), ("worldkit.run.agents", "worldkit.agents.registry"),
                     ("worldkit.run.analysis.gee", "worldkit.analysis.gee"), ("worldkit.run.report", "worldkit.report.build")]:
        sys.modules.pop(old, None)
        with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
            module = importlib.import_module(old)
        assert module is importlib.import_module(new)
    for old in ("worldkit.run.agents", "worldkit.run.analysis"):
        sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning):
        from worldkit.run.agents import register_agent  # the old spelling of a plug-in author
    with pytest.warns(DeprecationWarning):
        from worldkit.run.analysis import analyze
    assert register_agent.__module__ == "worldkit.agents.registry"
    assert analyze.__module__ == "worldkit.analysis.analyze"
