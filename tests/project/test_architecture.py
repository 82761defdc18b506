"""The house's shape: layers import only downwards, no import cycles, a thin root."""

from __future__ import annotations

import inspect
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import grimp
import pytest

import ccwire
import ccwire.batch
import ccwire.testing

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "ccwire"


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    imported = sorted(graph.find_modules_directly_imported_by(child))
                    work.append((child, iter(imported)))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_between_modules() -> None:
    # every import counts: module level, inside functions and under TYPE_CHECKING
    graph = grimp.build_graph("ccwire")
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for name in ("a", "a.x", "a.y", "a.z"):
        graph.add_module(name)
    graph.add_import(importer="a.x", imported="a.y")
    graph.add_import(importer="a.y", imported="a.x")
    graph.add_import(importer="a.z", imported="a.x")
    assert _cycles(graph) == [["a.x", "a.y"]]


def test_layer_contracts_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_the_package_root_holds_only_the_entry_points_and_the_layers() -> None:
    files = {p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"}
    layers = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    # types.py: claude-agent-sdk's `types` module path, a re-export like the root
    assert files - layers == {"__init__.py", "__main__.py", "_version.py", "py.typed", "types.py"}
    for layer in layers:
        init = PACKAGE / layer / "__init__.py"
        assert init.is_file(), layer
        module = __import__(f"ccwire.{layer}", fromlist=["_"])
        assert (module.__doc__ or "").strip(), f"{layer}/__init__.py says what the layer is for"


def test_the_root_only_re_exports() -> None:
    import ast

    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        assert isinstance(node, (ast.Expr, ast.ImportFrom, ast.Import, ast.If, ast.Assign)), (
            ast.dump(node)[:80]
        )
        assert not isinstance(node, (ast.FunctionDef, ast.ClassDef))


@pytest.mark.parametrize(
    ("package", "public"),
    [(ccwire, "ccwire"), (ccwire.testing, "ccwire.testing"), (ccwire.batch, "ccwire.batch")],
)
def test_public_objects_report_the_public_module(package: Any, public: str) -> None:
    names = package.__all__
    wrong = []
    for name in names:
        obj = getattr(package, name)
        if isinstance(obj, types.GenericAlias):  # a type alias; isclass() says so on 3.10
            continue
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and obj.__module__ != public:
            wrong.append(f"{name}: {obj.__module__}")
    assert wrong == []


def test_a_public_class_repr_and_pickle_use_the_public_name() -> None:
    import pickle

    from ccwire import TextBlock

    block = TextBlock("hi")
    assert repr(type(block)) == "<class 'ccwire.TextBlock'>"
    assert pickle.loads(pickle.dumps(block)) == block


def test_no_docstring_cites_internal_source_documents() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for needle in ("seed 0", "§"):
            if needle in text:
                offenders.append(f"{path.relative_to(PACKAGE)}: {needle}")
    assert offenders == []
