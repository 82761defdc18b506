"""The public surface: sorted exports, docstrings, and a light ``import ccwire``."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
import types
from pathlib import Path

import ccwire
import ccwire.testing


def test_all_is_sorted_and_unique() -> None:
    assert list(ccwire.__all__) == sorted(ccwire.__all__)
    assert len(set(ccwire.__all__)) == len(ccwire.__all__)
    assert list(ccwire.testing.__all__) == sorted(ccwire.testing.__all__)


def test_every_export_exists() -> None:
    for module in (ccwire, ccwire.testing):
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert missing == []


def _top_level_docstrings(path: Path) -> dict[str, list[str | None]]:
    """Each name assigned at the top of ``path``, with the string literal that follows it.

    An attribute docstring (the string literal right after an assignment) is what
    mkdocstrings shows for a type alias or a constant; ``None`` means there is none.
    """
    body = ast.parse(path.read_text(encoding="utf-8"), filename=str(path)).body
    found: dict[str, list[str | None]] = {}
    for node, following in zip(body, [*body[1:], None], strict=True):
        if isinstance(node, ast.Assign):
            names = [target.id for target in node.targets if isinstance(target, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        else:
            continue
        doc = None
        if (
            isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            doc = following.value.value
        for name in names:
            found.setdefault(name, []).append(doc)
    return found


def _class_docstring(cls: type) -> str | None:
    """The docstring written in the class body (a dataclass without one gets a generated
    ``__doc__``, so ``__doc__`` alone cannot tell)."""
    try:
        source = inspect.getsourcefile(cls)
    except TypeError:
        source = None
    if source is None or cls.__qualname__ != cls.__name__:
        return cls.__doc__
    for node in ast.parse(Path(source).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            return ast.get_docstring(node)
    return cls.__doc__


def _undocumented(module: types.ModuleType) -> list[str]:
    assert module.__file__ is not None
    package_dir = Path(module.__file__).parent
    assignments: dict[str, list[tuple[Path, str | None]]] = {}
    for path in sorted(package_dir.rglob("*.py")):
        for name, docs in _top_level_docstrings(path).items():
            assignments.setdefault(name, []).extend((path, doc) for doc in docs)
    undocumented = []
    for name in module.__all__:
        obj = getattr(module, name)
        where = f"{module.__name__}.{name}"
        # (on Python 3.10 a generic alias such as Callable[...] passes isclass())
        if inspect.isclass(obj) and not isinstance(obj, types.GenericAlias):
            doc = _class_docstring(obj)
        elif inspect.isfunction(obj):
            doc = obj.__doc__
        else:
            # a type alias or a constant: it needs an attribute docstring where it is assigned
            defined = assignments.get(name)
            if not defined:
                undocumented.append(f"{where} (no top-level assignment in {package_dir}/**/*.py)")
                continue
            missing = [path.name for path, text in defined if not (text or "").strip()]
            if missing:
                undocumented.append(f"{where} (assigned in {', '.join(missing)})")
            continue
        if not (doc or "").strip():
            undocumented.append(where)
    return undocumented


def test_every_export_has_a_docstring() -> None:
    # classes and functions by their docstring; type aliases and constants by the
    # attribute docstring after their assignment (what the API reference shows)
    assert _undocumented(ccwire) == []
    assert _undocumented(ccwire.testing) == []


def test_docstring_check_sees_a_missing_attribute_docstring(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text(
        'Alias = int\n"""Documented."""\n\nBare = str\nLATER: int = 1\n\nx = 2\n"""Doc."""\n'
    )
    assert _top_level_docstrings(tmp_path / "mod.py") == {
        "Alias": ["Documented."],
        "Bare": [None],
        "LATER": [None],
        "x": ["Doc."],
    }


def test_reference_sdk_names_are_available() -> None:
    # the names a claude-agent-sdk user imports; switching is a one-line change
    for name in (
        "tool",
        "create_sdk_mcp_server",
        "ClaudeAgentOptions",
        "ClaudeSDKClient",
        "query",
        "AssistantMessage",
        "UserMessage",
        "SystemMessage",
        "ResultMessage",
        "StreamEvent",
        "TextBlock",
        "ThinkingBlock",
        "ToolUseBlock",
        "ToolResultBlock",
        "ToolPermissionContext",
        "PermissionResultAllow",
        "PermissionResultDeny",
        "HookMatcher",
        "ClaudeSDKError",
        "CLINotFoundError",
        "CLIConnectionError",
        "ProcessError",
        "CLIJSONDecodeError",
    ):
        assert name in ccwire.__all__, name


def test_error_tree_has_one_root() -> None:
    for name in ccwire.__all__:
        obj = getattr(ccwire, name)
        if inspect.isclass(obj) and issubclass(obj, BaseException):
            assert issubclass(obj, ccwire.CcwireError), name


def test_import_does_not_pull_heavy_packages() -> None:
    code = (
        "import sys, ccwire\n"
        "for name in ccwire.__all__: getattr(ccwire, name)  # every lazy export loaded\n"
        "heavy = ('mcp', 'pydantic', 'jsonschema', 'jsonschema_rs', 'rich', 'mcp_types',\n"
        "         'msgspec')\n"
        "heavy = sorted(m for m in heavy if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""


def _missing_probe(module: str) -> str:
    """Snippet lines that print the `AttributeError` of ``module.MISSING``."""
    return f"try:\n    {module}.MISSING\nexcept AttributeError as exc:\n    print('attr', exc)\n"


def _run_lazy_snippet(code: str, path: Path) -> None:
    """Run ``code`` in a fresh interpreter with ``path`` on ``sys.path``; it must succeed
    and its `_missing_probe` must report the missing name."""
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "has no attribute 'MISSING'" in out.stdout


def test_lazy_exports_follow_the_type_checking_block(tmp_path: Path) -> None:
    pkg = tmp_path / "lazypkg"
    pkg.mkdir()
    (pkg / "_impl.py").write_text("VALUE = 42\nOTHER = 'x'\n")
    (pkg / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from ccwire._core.lazy import lazy_exports\n"
        "if TYPE_CHECKING:\n"
        "    from ._impl import VALUE, OTHER as RENAMED\n"
        "__all__ = ['RENAMED', 'VALUE']\n"
        "__getattr__, __dir__ = lazy_exports(__name__, __all__)\n"
    )
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "import lazypkg\n"
        "assert 'lazypkg._impl' not in sys.modules\n"
        "assert lazypkg.VALUE == 42 and lazypkg.RENAMED == 'x'\n"
        "assert 'lazypkg._impl' in sys.modules and 'VALUE' in dir(lazypkg)\n"
    )
    _run_lazy_snippet(code + _missing_probe("lazypkg"), tmp_path)
    # a name in __all__ that the block does not import is reported at the first access
    (pkg / "__init__.py").write_text(
        (pkg / "__init__.py").read_text().replace("'VALUE']", "'VALUE', 'NOWHERE']")
    )
    bad = subprocess.run(
        [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import lazypkg; "
         "lazypkg.VALUE", str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode != 0 and "['NOWHERE']" in bad.stderr


def test_lazy_exports_of_a_plain_module_resolve_next_to_it(tmp_path: Path) -> None:
    """In a module that is not a package, the block's relative imports resolve from the
    module's own package, and without ``__all__`` every name the block imports is lazy."""
    pkg = tmp_path / "lazymod"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "_impl.py").write_text("VALUE = 42\n")
    (pkg / "front.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from ccwire._core.lazy import lazy_exports\n"
        "if TYPE_CHECKING:\n"
        "    from ._impl import VALUE as RENAMED\n"
        "OWN = 1\n"
        "__getattr__, __dir__ = lazy_exports(__name__)\n"
    )
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from lazymod import front\n"
        "assert 'lazymod._impl' not in sys.modules\n"
        "assert 'RENAMED' in dir(front) and 'OWN' in dir(front)\n"
        "assert front.RENAMED == 42 and 'lazymod._impl' in sys.modules\n"
    )
    _run_lazy_snippet(code + _missing_probe("front"), tmp_path)


def _relative_imports_by_ast(source: str) -> list[tuple[bool, str, str, str]]:
    """``(directly under TYPE_CHECKING, relative module, attribute, bound name)``."""
    tree = ast.parse(source)
    direct = {
        id(stmt)
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
        for stmt in node.body
    }
    return [
        (id(node) in direct, "." * node.level + node.module, alias.name, alias.asname or alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level >= 1 and node.module
        for alias in node.names
    ]


def _public_names_by_ast(source: str) -> set[str]:
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            assert isinstance(node.value, (ast.List, ast.Tuple))
            return {str(e.value) for e in node.value.elts if isinstance(e, ast.Constant)}
    return set()


def test_the_import_tables_match_what_ast_reads() -> None:
    """The lazy-export and public-module tables are read with patterns (cheaper than
    ``ast.parse`` on every import); for the public packages they say what ast says."""
    from ccwire._core.lazy import exports_table, relative_imports
    from ccwire._core.public import _ALL, _QUOTED, _exports

    for package in ("ccwire", "ccwire.testing", "ccwire.batch"):
        path = Path(__import__(package, fromlist=["_"]).__file__ or "")
        source = path.read_text(encoding="utf-8")
        found = _relative_imports_by_ast(source)
        assert found, package
        assert sorted(relative_imports(source)) == sorted(found), package
        lazy = {name: (module, attr) for direct, module, attr, name in found if direct}
        assert exports_table(source) == lazy, package
        public = _public_names_by_ast(source)
        assert public, package
        listed = _ALL.search(source)  # how __all__ is read before the package has it
        assert listed is not None and set(_QUOTED.findall(listed[1])) == public, package
        absolute = {}
        for _, module, attr, name in found:
            if name in public:
                level = len(module) - len(module.lstrip("."))
                base = package.rsplit(".", level - 1)[0] if level > 1 else package
                absolute[name] = (f"{base}.{module.lstrip('.')}", attr)
        assert _exports(package) == absolute, package


def test_cli_json_decode_error_has_the_reference_signature() -> None:
    import json

    from ccwire import CLIJSONDecodeError, MessageDecodeError

    try:
        json.loads("{bad")
    except json.JSONDecodeError as exc:
        error = CLIJSONDecodeError("{bad", exc)
    assert isinstance(error, MessageDecodeError)
    assert error.line == "{bad" and isinstance(error.original_error, json.JSONDecodeError)
    assert str(error).startswith("Failed to decode JSON: {bad")
