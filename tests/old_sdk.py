"""Virtual environments with an old mcp 1.x SDK, made once and cached, for servers built on it.

Many published Python servers still run on the mcp 1.x SDK, which speaks only the ``initialize``
handshake. Each pinned version gets its own venv under the user cache folder
(``$XDG_CACHE_HOME`` or ``~/.cache``)/toolgen-tests/, keyed by its requirements, so later runs
reuse it. Imported as ``old_sdk`` (tests/conftest.py puts tests/ on sys.path).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
OLD_SDK_SERVER = TESTS / "servers" / "old_sdk_server.py"

#: The versions tested and what each venv gets. mcp 1.6.0 imports a pydantic internal that 2.11 removed.
REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "1.6.0": ("mcp==1.6.0", "pydantic==2.10.6"),
    "1.30.0": ("mcp==1.30.0",),
}


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolgen-tests"


def _pip(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(python), "-m", "pip", "--disable-pip-version-check", "-q", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)


def _registry_unreachable(python: Path, requirement: str, scratch: Path) -> bool:
    """Whether pip cannot even fetch the one package: the only reason to skip rather than fail."""
    probe = _pip(python, "download", "--no-deps", "-d", str(scratch), requirement)
    return probe.returncode != 0


def old_sdk_python(version: str) -> Path:
    """The interpreter of a cached venv with ``mcp==version``; skips only when PyPI is unreachable."""
    return cached_venv(f"mcp-{version}", REQUIREMENTS[version])


#: Published servers installed from PyPI by the tests, each in its own venv (they pin their own
#: mcp or fastmcp, which cannot share toolgen's environment). Exact versions: the tests check what
#: these versions do.
PUBLISHED: dict[str, tuple[str, ...]] = {
    "math-mcp-learning-server": ("math-mcp-learning-server==0.10.3",),
    # The 98-tool capture of benchmarks/captures/ (benchmarks/atlassian.py refreshes it).
    "mcp-atlassian": ("mcp-atlassian==0.23.1",),
}


def published_python(name: str) -> Path:
    """The interpreter of a cached venv holding the published server ``name`` (``PUBLISHED``)."""
    return cached_venv(name, PUBLISHED[name])


def _made_by_uv(folder: Path, requirements: tuple[str, ...]) -> bool:
    """Make the venv with uv when it is on PATH (the README's ``nox[uv]`` brings it): 2 s where
    venv and pip take 15 s from empty caches. Any failure leaves the job to venv and pip, which
    also tell an unreachable registry from a failed install."""
    uv = shutil.which("uv")
    if uv is None:
        return False
    env = {**os.environ, "UV_COMPILE_BYTECODE": "1"}
    run = [[uv, "venv", "-q", "--clear", "--python", sys.executable, str(folder)],
           [uv, "pip", "install", "-q", "--python", str(folder / "bin" / "python"), *requirements]]  # fmt: skip
    try:  # bounded like pip's install below, and on a timeout left to it
        done = (subprocess.run(c, capture_output=True, env=env, timeout=600, check=False) for c in run)
        return all(d.returncode == 0 for d in done)
    except subprocess.TimeoutExpired:
        return False


def cached_venv(label: str, requirements: tuple[str, ...]) -> Path:
    """The interpreter of a venv with ``requirements``, made once under the cache folder.

    Skips (never fails) only when pip cannot even fetch the first requirement: PyPI is unreachable.
    """
    key = hashlib.sha256("\n".join(requirements).encode()).hexdigest()[:12]
    folder = cache_root() / f"{label}-{key}"
    python = folder / "bin" / "python"
    ready = folder / "ready"
    folder.parent.mkdir(parents=True, exist_ok=True)
    # pytest-xdist workers may ask at once: one builds, the others wait for it.
    with open(folder.parent / f"{label}-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if ready.is_file() and python.exists():
            return python
        if _made_by_uv(folder, requirements):
            ready.write_text("\n".join(requirements) + "\n", encoding="utf-8")
            return python
        made = subprocess.run(
            [sys.executable, "-m", "venv", "--clear", str(folder)], capture_output=True, text=True, check=False
        )
        assert made.returncode == 0, f"cannot make a venv for {label}: {made.stderr}"
        installed = _pip(python, "install", *requirements)
        if installed.returncode != 0:
            if _registry_unreachable(python, requirements[0], folder / "probe"):
                pytest.skip(f"PyPI is unreachable, so no venv with {' '.join(requirements)} can be made")
            raise AssertionError(f"pip install {' '.join(requirements)} failed:\n{installed.stderr[-2000:]}")
        ready.write_text("\n".join(requirements) + "\n", encoding="utf-8")
        return python
