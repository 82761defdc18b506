"""The built wheel installs into a fresh venv and serves every public name from there."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_CHECK = """
import importlib, inspect, sys
import ccwire, ccwire.testing
assert "site-packages" in ccwire.__file__, ccwire.__file__
for package, public in ((ccwire, "ccwire"), (ccwire.testing, "ccwire.testing")):
    for name in package.__all__:
        obj = getattr(package, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__module__ == public, (name, obj.__module__)
print(len(ccwire.__all__), len(ccwire.testing.__all__))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (found,) = out.glob("ccwire-*.whl")
    return found


def test_the_wheel_installs_and_imports_every_public_name(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    done = subprocess.run(
        [str(python), "-c", _CHECK],
        cwd=tmp_path,  # not the checkout: the installed package must be the one imported
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    names, testing_names = map(int, done.stdout.split())
    import ccwire
    import ccwire.testing

    assert (names, testing_names) == (len(ccwire.__all__), len(ccwire.testing.__all__))
    script = env_dir / "bin" / "ccwire"
    assert script.exists()
    usage = subprocess.run(
        [str(script), "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert usage.returncode == 0 and "run" in usage.stdout, usage.stderr
