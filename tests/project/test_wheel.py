"""The README's install lines, on a fresh venv: the built wheel and sdist pass `twine check`,
the wheel installs and serves every public name and the `ccwire` command (`--version`,
`doctor`); a checkout installs with `pip install .`. The pinned CLI version is written
once in the package, and the Makefile and package.json agree with it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_CHECK = """
import importlib, inspect, sys, types
import ccwire, ccwire.batch, ccwire.testing
assert "site-packages" in ccwire.__file__, ccwire.__file__
for package, public in ((ccwire, "ccwire"), (ccwire.testing, "ccwire.testing"),
                        (ccwire.batch, "ccwire.batch")):
    for name in package.__all__:
        obj = getattr(package, name)
        if isinstance(obj, types.GenericAlias):  # a type alias: isclass() on 3.10
            continue
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__module__ == public, (name, obj.__module__)
print(len(ccwire.__all__), len(ccwire.testing.__all__))
"""


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m build`: the sdist, and the wheel built from it, in a fresh directory."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return out


@pytest.fixture(scope="module")
def wheel(dist: Path) -> Path:
    (found,) = dist.glob("ccwire-*.whl")
    return found


def test_wheel_and_sdist_pass_twine_check(dist: Path) -> None:
    (sdist,) = dist.glob("ccwire-*.tar.gz")
    (built,) = dist.glob("ccwire-*.whl")
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(built), str(sdist)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2, done.stdout


def test_the_license_ships_in_the_wheel_and_the_sdist(dist: Path) -> None:
    """The MIT licence the metadata names, as a file in both archives."""
    import tarfile
    import zipfile

    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License\n")
    (built,) = dist.glob("ccwire-*.whl")
    with zipfile.ZipFile(built) as wheel_zip:
        names = wheel_zip.namelist()
        (shipped,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert wheel_zip.read(shipped).decode() == license_text
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        fields = wheel_zip.read(metadata).decode().splitlines()
    assert "License-Expression: MIT" in fields and "License-File: LICENSE" in fields
    (sdist,) = dist.glob("ccwire-*.tar.gz")
    with tarfile.open(sdist) as archive:
        top = archive.getnames()[0].split("/")[0]
        member = archive.extractfile(f"{top}/LICENSE")
        assert member is not None and member.read().decode() == license_text


def test_the_pinned_cli_version_is_written_once() -> None:
    from ccwire._transport.discovery import INSTALL_COMMAND, PINNED_CLI_VERSION

    makefile = (ROOT / "Makefile").read_text()
    (make_version,) = re.findall(r"^CLI_VERSION := (\S+)$", makefile, re.MULTILINE)
    assert make_version == PINNED_CLI_VERSION
    package = json.loads((ROOT / "package.json").read_text())
    assert package["dependencies"]["@anthropic-ai/claude-code"] == PINNED_CLI_VERSION
    readme = (ROOT / "README.md").read_text()
    assert INSTALL_COMMAND in readme


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

    from ccwire._transport.discovery import PINNED_CLI_VERSION

    nowhere = {"PATH": str(env_dir / "bin"), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    version = subprocess.run(
        [str(script), "--version"], env=nowhere, cwd=tmp_path,
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert version.returncode == 0, version.stderr
    assert version.stdout.splitlines() == [
        f"ccwire {ccwire.__version__}",
        f"Claude Code CLI pinned: {PINNED_CLI_VERSION}",
        "Claude Code CLI found: not found",
    ]
    # without a CLI the doctor runs, prints its report with the install command, exits 3
    doctor = subprocess.run(
        [str(script), "doctor"], env=nowhere, cwd=tmp_path,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert doctor.returncode == 3, doctor.stdout + doctor.stderr
    assert doctor.stdout.startswith("ccwire doctor\n") and "Traceback" not in doctor.stderr
    assert (
        f"npm install --prefix ~/.ccwire/cli @anthropic-ai/claude-code@{PINNED_CLI_VERSION}"
        in doctor.stdout
    )
    assert re.search(r"^\d+ problem\(s\), \d+ warning\(s\)$", doctor.stdout, re.MULTILINE)
    cli = os.environ.get("CCWIRE_CLI_PATH")
    if cli and os.access(cli, os.X_OK):  # with the real CLI: found, and its version shown
        found = subprocess.run(
            [str(script), "--version"], env={**nowhere, "CCWIRE_CLI_PATH": cli}, cwd=tmp_path,
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert f"Claude Code CLI found: {PINNED_CLI_VERSION}" in found.stdout, found.stdout


def test_a_checkout_installs_with_pip(tmp_path: Path) -> None:
    """The README's `pip install .`, from a copy of the checkout, into a fresh venv."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    done = subprocess.run(
        [str(env_dir / "bin" / "python"), "-m", "pip", "install", "--quiet", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    version = subprocess.run(
        [str(env_dir / "bin" / "ccwire"), "--version"],
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert version.returncode == 0 and version.stdout.startswith("ccwire "), version.stderr
