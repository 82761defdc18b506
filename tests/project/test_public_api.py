"""The public surface: sorted exports, docstrings, and a light ``import ccwire``."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import shutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest

import ccwire
import ccwire.batch
import ccwire.testing
import ccwire.types
from ccwire._core.lazy import lazy_table


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


FIRST_NAMES = [  # what a newcomer meets first: `help()` on each shows a code example
    ccwire.query,
    ccwire.ClaudeSDKClient,
    ccwire.ClaudeAgentOptions,
    ccwire.tool,
    ccwire.create_sdk_mcp_server,
    ccwire.MissingExtraError,
    ccwire.testing.ScriptedModel,
]


@pytest.mark.parametrize("obj", FIRST_NAMES, ids=lambda obj: obj.__name__)
def test_the_first_names_show_an_example_that_parses(obj: Any) -> None:
    doc = inspect.getdoc(obj) or ""
    fenced = re.findall(r"^ *```python\n(.*?)^ *```", doc, re.M | re.DOTALL)
    indented = re.findall(r":\n\n((?:    .*\n|\n)+)", doc + "\n")  # a block after "...:"
    examples = [textwrap.dedent(block) for block in fenced or indented]
    assert examples, f"{obj.__name__}'s docstring has no code example"
    for code in examples:
        compile(code, obj.__name__, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


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
        "         'msgspec', 'opentelemetry')\n"
        "heavy = sorted(m for m in heavy if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""


def test_the_usual_import_leaves_the_process_machinery_for_connect() -> None:
    # The import time users feel (bench: <= 1.3x ``import anyio, asyncio``): the names a
    # program imports first load no spawning code; connect() loads it. A constant moved
    # into the spawn module once pulled it in (subprocess, shutil, secrets, anyio's
    # task machinery: 1.55x).
    code = (
        "import sys\n"
        "from ccwire import ClaudeSDKClient, ClaudeAgentOptions, tool, create_sdk_mcp_server,"
        " query, HookMatcher\n"
        "later = ('subprocess', 'shutil', 'secrets', 'ccwire._transport.spawn',\n"
        "         'ccwire._transport.line_writer', 'ccwire._protocol.control')\n"
        "print(','.join(sorted(m for m in later if m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""


_LAZY_INIT = """\
from typing import TYPE_CHECKING

from ccwire._core.lazy import install_lazy_importer, publish

if TYPE_CHECKING or not install_lazy_importer(__name__):
    from . import _sub
    from ._impl import VALUE, Thing, make, Other as Renamed

    publish(__name__)

__all__ = ["Renamed", "Thing", "VALUE", "make"]
"""
_LAZY_IMPL = "VALUE = 42\nclass Thing: pass\nclass Other: pass\ndef make(): return Thing()\n"


def _toy_package(root: Path) -> None:
    pkg = root / "lazypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(_LAZY_INIT)
    (pkg / "_impl.py").write_text(_LAZY_IMPL)
    (pkg / "_sub.py").write_text("X = 1\n")


def _run(code: str, path: Path) -> str:
    """Run ``code`` in a fresh interpreter with ``path`` first on ``sys.path``."""
    out = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(path)!r})\n{code}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_lazy_importer_loads_the_block_on_first_use(tmp_path: Path) -> None:
    _toy_package(tmp_path)
    code = (
        "import lazypkg\n"
        "assert 'lazypkg._impl' not in sys.modules and 'lazypkg._sub' not in sys.modules\n"
        "assert lazypkg._sub.X == 1  # a submodule, imported on first use\n"
        "assert sorted(lazypkg.__all__) == [n for n in dir(lazypkg) if n in lazypkg.__all__]\n"
        "assert lazypkg.VALUE == 42 and 'lazypkg._impl' in sys.modules\n"
        "from lazypkg import _impl\n"
        "assert lazypkg.Renamed is _impl.Other and lazypkg.make is _impl.make\n"
        # the public module, for names bound under their own name; Thing was published
        # with the first name taken from _impl, before anyone asked for it
        "assert _impl.Thing.__module__ == 'lazypkg' and lazypkg.make.__module__ == 'lazypkg'\n"
        "assert _impl.Other.__module__ == 'lazypkg._impl'  # pickle would not find it\n"
        "try:\n    lazypkg.MISSING\nexcept AttributeError as exc:\n    print(exc)\n"
    )
    assert "has no attribute 'MISSING'" in _run(code, tmp_path)


def test_an_error_raised_from_inside_reports_the_public_module(tmp_path: Path) -> None:
    # the program never names OptionsError: its module was loaded as a side effect of
    # another name's, and a traceback said ccwire._core.errors.OptionsError
    code = (
        "from ccwire import ClaudeAgentOptions\n"
        "try:\n    ClaudeAgentOptions(allowed_tool=['x'])\n"
        "except Exception as exc:\n    print(type(exc).__module__, type(exc).__qualname__)\n"
    )
    assert _run(code, tmp_path).split() == ["ccwire", "OptionsError"]


def test_without_sources_the_block_runs_as_written(tmp_path: Path) -> None:
    _toy_package(tmp_path)
    _compile_without_sources(tmp_path)
    code = (
        "import lazypkg\n"
        "assert lazypkg.__file__.endswith('.pyc') and 'lazypkg._impl' in sys.modules\n"
        "assert lazypkg.Thing.__module__ == 'lazypkg' == lazypkg.make.__module__\n"
        "assert lazypkg.Renamed.__module__ == 'lazypkg._impl' and lazypkg.VALUE == 42\n"
    )
    _run(code, tmp_path)


def test_a_loader_that_offers_no_source_still_loads_lazily(tmp_path: Path) -> None:
    """pytest loads a package that ships a pytest plugin through its assertion rewriter,
    which has no ``get_source()``: the block is still read, from the ``.py`` file."""
    _toy_package(tmp_path)
    code = (
        "import importlib.machinery as m\n"
        "class NoSource(m.SourceFileLoader):\n"
        "    get_source = None\n"
        "class Finder:\n"
        "    @staticmethod\n"
        "    def find_spec(name, path=None, target=None):\n"
        "        spec = m.PathFinder.find_spec(name, path)\n"
        "        if spec is not None and name == 'lazypkg':\n"
        "            spec.loader = NoSource(name, spec.origin)\n"
        "        return spec\n"
        "sys.meta_path.insert(0, Finder)\n"
        "import lazypkg\n"
        "assert lazypkg.__spec__.loader.get_source is None\n"
        "print('lazypkg._impl' in sys.modules)\n"
    )
    assert _run(code, tmp_path).strip() == "False"


def _compile_without_sources(root: Path) -> None:
    """What an install that ships only bytecode holds: ``x.pyc`` beside where ``x.py`` was."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "-b", str(root)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    for source in root.rglob("*.py"):
        source.unlink()


_PUBLIC_API_CHECK = """\
import inspect, pickle, types
import ccwire, ccwire.batch, ccwire.testing, ccwire.types
assert ccwire.__file__.startswith(sys.path[0]), ccwire.__file__
for package in (ccwire, ccwire.testing, ccwire.batch, ccwire.types):
    for name in package.__all__:
        obj = getattr(package, name)
        if isinstance(obj, types.GenericAlias):  # a type alias: isclass() on 3.10
            continue
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and obj.__name__ == name:
            public = package.__name__
            if package is ccwire.types and name in ccwire.__all__:
                public = "ccwire"  # the same object as the top-level name
            assert obj.__module__ == public, (package.__name__, name, obj.__module__)
assert ccwire.types.McpServer is ccwire.SdkMcpServer
assert ccwire.ClaudeAgentOptions(max_turns=2).max_turns == 2
block = ccwire.TextBlock("hi")
assert pickle.loads(pickle.dumps(block)) == block
assert repr(type(block)) == "<class 'ccwire.TextBlock'>"
print(len(ccwire.__all__))
"""

_TYPE_HINTS_CHECK = """\
import collections.abc, inspect, types, typing
import ccwire, ccwire.batch, ccwire.testing, ccwire.types

def targets(package):
    # every public class and function, and the public methods of a class (with
    # ``__init__`` and ``__call__``), its own and those of its ccwire bases
    for name in package.__all__:
        obj = getattr(package, name)
        if isinstance(obj, types.GenericAlias):  # a type alias: isclass() on 3.10
            continue
        if inspect.isfunction(obj):
            yield name, obj
        if not inspect.isclass(obj):
            continue
        yield name, obj
        for base in obj.__mro__:
            if base.__module__.partition(".")[0] != "ccwire":
                continue
            for attr, value in vars(base).items():
                if attr.startswith("_") and attr not in ("__init__", "__call__"):
                    continue
                if isinstance(value, (staticmethod, classmethod)):
                    value = value.__func__
                if isinstance(value, property):
                    value = value.fget
                if inspect.isfunction(value):
                    yield f"{name}.{attr}", value

unresolved = set()
checked = 0
for package in (ccwire, ccwire.testing, ccwire.batch, ccwire.types):
    for name, obj in targets(package):
        checked += 1
        try:
            hints = typing.get_type_hints(obj)
        except NameError:
            unresolved.add(name)
            continue
        assert not any(isinstance(h, typing.ForwardRef) for h in hints.values()), name
assert unresolved == UNRESOLVED, unresolved
assert checked > 1000, checked
hints = typing.get_type_hints(ccwire.AssistantMessage)
assert hints["content"] == list[ccwire.types.ContentBlock]
hints = typing.get_type_hints(ccwire.ClaudeAgentOptions)
assert hints["session_store"] == typing.Optional[ccwire.SessionStore], hints["session_store"]
hints = typing.get_type_hints(ccwire.ClaudeSDKClient.receive_response)
assert hints["return"] == collections.abc.AsyncGenerator[ccwire.types.Message, None]
"""
"""``typing.get_type_hints()`` on every public class, function and method: run here and
without sources."""

UNRESOLVED = {"RedisStore.__init__"}
"""Where ``typing.get_type_hints()`` fails: ``RedisStore(client=...)`` is annotated with
``redis.Redis``, and redis-py (an extra) takes 200 ms to import, so ``import ccwire``
does not import it, and a lazy block cannot name it (a bytecode-only install runs the
block at once, and would fail without redis-py). The reference has no such class."""


def test_type_hints_resolve_on_the_public_api() -> None:
    """``typing.get_type_hints()`` on a public class looked the names of its string
    annotations up in ``ccwire``, the module it reports, where ``Mapping`` or
    ``ClassVar`` are not defined: it failed on 185 classes, which serializers and
    frameworks reading type hints (pydantic, cattrs) use.  They are looked up in the
    module that wrote them.  It also failed on names imported only for type checkers
    (``ClaudeAgentOptions``: ``Path``, ``ClaudeSDKClient``: ``Message``, 55 classes,
    functions and methods in all): each is now bound at run time, or named through its
    package's lazy block (``_wire.messages.Message``), which loads it on first use."""
    exec(_TYPE_HINTS_CHECK, {"UNRESOLVED": UNRESOLVED})


def test_the_public_api_works_from_an_install_without_sources(tmp_path: Path) -> None:
    """Installed as bytecode only (``compileall -b``, sources removed): every public name
    resolves and reports its public module, as with sources."""
    assert ccwire.__file__ is not None
    shutil.copytree(
        Path(ccwire.__file__).parent,
        tmp_path / "ccwire",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    _compile_without_sources(tmp_path)
    assert not list(tmp_path.rglob("*.py"))
    check = f"UNRESOLVED = set({sorted(UNRESOLVED)!r})\n" + _TYPE_HINTS_CHECK
    assert int(_run(check + _PUBLIC_API_CHECK, tmp_path)) == len(ccwire.__all__)


@pytest.mark.parametrize("package", ["ccwire", "ccwire.testing", "ccwire.batch", "ccwire.types"])
def test_all_lists_what_the_lazy_block_imports(package: str) -> None:
    """``__all__`` and the lazy block name the same things (the root also has its version)."""
    module = importlib.import_module(package)
    assert module.__file__ is not None
    table = lazy_table(Path(module.__file__).read_text(encoding="utf-8"))
    assert sorted(table) == sorted(set(module.__all__) - {"__version__"})


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
