"""``ccwire compat`` in-process, on a site-packages of its own (a temporary directory that
``sysconfig`` names as this Python's ``purelib``): the cases the drop-in must see, refuse
or survive that ``tests/compat/test_dropin.py`` does not reach (an unreadable marker, a
real ``claude-agent-sdk`` distribution on the path, a module without a spec, a broken
record, a failed write)."""

from __future__ import annotations

import io
import sys
import sysconfig
import types
from pathlib import Path

import pytest

import ccwire
from ccwire._app.compat import DropInError, dropin_status, install_dropin, uninstall_dropin
from ccwire._app.main import CliIO, main
from ccwire._app.reference_names import REFERENCE_VERSION

DIST_INFO = f"claude_agent_sdk-{REFERENCE_VERSION}.dist-info"


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This Python's site-packages, as `ccwire compat` sees it."""
    site = tmp_path / "site-packages"
    site.mkdir()
    paths = {**sysconfig.get_paths(), "purelib": str(site)}
    monkeypatch.setattr(sysconfig, "get_paths", lambda *a, **k: paths)
    return site


def compat(*args: str) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = main(["compat", *args], io=CliIO(io.StringIO(), stdout, stderr, {}))
    return code, stdout.getvalue(), stderr.getvalue()


def test_a_drop_in_of_another_ccwire_says_to_install_again(site: Path) -> None:
    install_dropin(site)
    (site / DIST_INFO / "ccwire.json").write_text("{not json")  # unreadable: version unknown
    out = compat("status")[1]
    assert out.splitlines()[0] == (
        f"claude-agent-sdk drop-in: installed by ccwire ?; this is ccwire {ccwire.__version__}: "
        "run `ccwire compat install` again to refresh it"
    )


def test_the_real_sdk_on_the_path_is_seen(
    tmp_path: Path, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    info = elsewhere / "claude_agent_sdk-0.2.187.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: claude_agent_sdk\nVersion: 0.2.187\n"
    )
    (info / "INSTALLER").write_text("pip\n")
    monkeypatch.syspath_prepend(str(elsewhere))
    assert dropin_status(site).real_sdk == (f"claude-agent-sdk 0.2.187 in {elsewhere}",)
    with pytest.raises(DropInError, match="not installed by ccwire"):
        uninstall_dropin(site)


def test_a_module_without_a_spec_is_not_a_real_sdk(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    half = types.ModuleType("claude_agent_sdk")
    half.__spec__ = None  # a module left half-imported: find_spec cannot tell
    monkeypatch.setitem(sys.modules, "claude_agent_sdk", half)
    assert dropin_status(site).real_sdk == ()
    assert install_dropin(site).installed


def test_a_record_that_is_missing_or_has_blank_lines(site: Path) -> None:
    install_dropin(site)
    record = site / DIST_INFO / "RECORD"
    listed = sorted(line.split(",")[0] for line in record.read_text().splitlines())
    record.write_text(record.read_text().replace("\n", "\n\n"))  # blank lines are skipped
    assert sorted(uninstall_dropin(site)) == listed
    assert list(site.iterdir()) == []

    install_dropin(site)
    (site / DIST_INFO / "RECORD").unlink()
    with pytest.raises(DropInError, match="has no RECORD: remove it and "):
        uninstall_dropin(site)
    assert (site / "claude_agent_sdk" / "__init__.py").is_file()  # nothing removed


def test_a_failed_write_leaves_nothing_half_written(site: Path) -> None:
    (site / DIST_INFO).write_text("")  # a file where the dist-info directory goes
    with pytest.raises(DropInError, match="cannot write the drop-in into ") as refused:
        install_dropin(site)
    assert "owner of that environment" in refused.value.hint
    assert [p.name for p in site.iterdir()] == [DIST_INFO]  # the package was removed again
