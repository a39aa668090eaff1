"""toolgen's client for the MCP conformance suite: ``python tests/conformance/client.py SERVER_URL``.

The suite (``@modelcontextprotocol/conformance``) starts a test server per scenario, runs this
script with the server's URL, and judges what reached the server. The scenario's name is in
``MCP_CONFORMANCE_SCENARIO``; some auth scenarios put extra data (client credentials, keys) in
``MCP_CONFORMANCE_CONTEXT``.

It is written the way a new user of toolgen would write it, against the public surface only:
an infra file for the URL (``kind: ToolServerRegistry``), :class:`RuntimeRegistry` to connect,
list and call, and, where a scenario's tool asks the user for input, a package generated with
``toolgen generate --infra`` whose ``with_options(on_input=...)`` answers it. No MCP SDK call
appears here: whatever the suite checks is what the runtime itself sends.

Auth scenarios put an ``auth:`` block on the infra entry (docs/infra.md, "OAuth"): the context's
client ID goes in as written, its secrets, keys and ID token as ``env:VAR`` references to
variables this script sets, and tokens stay in memory (``token_store: memory``). Where a person
would sign in, :func:`browser` plays the person's browser through the registry's public
``authorize`` callback: the suite's authorization server approves at once and redirects to the
runtime's loopback listener.

Exit status: 0 when every step worked, 1 otherwise (with one line on stderr); the suite's own
checks decide the verdict.
"""

from __future__ import annotations

import importlib
import json
import os
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx2

from mas.runtime.registry import RuntimeRegistry

#: The infra server's name; a generated package puts its tools under ``tools.<SERVER>``.
SERVER = "conformance"
PACKAGE = "conformance_tools"

#: Arguments for the tools the suite's servers list; any other tool is called with ``{}``.
ARGUMENTS: Mapping[str, Mapping[str, Any]] = {"add_numbers": {"a": 5, "b": 3}}

#: The client ID metadata document the suite expects (auth/basic-cimd); used where a server supports it.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"

#: Scenarios whose tools ask the user for input, and the input kinds the client answers there.
ANSWERS: Mapping[str, tuple[str, ...]] = {"elicitation-sep1034-client-defaults": ("elicitation",)}


def env_secret(value: str) -> str:
    """``env:VAR`` for a secret: infra files never hold one (docs/tool-server-registry.md)."""
    var = f"CONFORMANCE_SECRET_{secrets.token_hex(4).upper()}"
    os.environ[var] = value
    return f"env:{var}"


def auth_entry(scenario: str, context: Mapping[str, Any]) -> dict[str, Any]:
    """The infra ``auth:`` block for an auth scenario, from the suite's context."""
    memory = {"token_store": "memory"}
    if scenario == "auth/client-credentials-jwt":
        return {
            "grant": "client_credentials",
            "client_id": context["client_id"],
            "private_key": env_secret(context["private_key_pem"]),
            "signing_algorithm": context.get("signing_algorithm", "RS256"),
            **memory,
        }
    if scenario == "auth/client-credentials-basic":
        return {
            "grant": "client_credentials",
            "client_id": context["client_id"],
            "client_secret": env_secret(context["client_secret"]),
            **memory,
        }
    if scenario == "auth/cross-app-access-complete-flow":
        return {
            "grant": "token_exchange",
            "client_id": context["client_id"],
            "client_secret": env_secret(context["client_secret"]),
            "idp_token_endpoint": context["idp_token_endpoint"],
            "idp_client_id": context["idp_client_id"],
            "id_token": env_secret(context["idp_id_token"]),
            **memory,
        }
    # Everything else is the authorization code flow, pre-registered when the context says so.
    entry: dict[str, Any] = {"client_metadata_url": CLIENT_METADATA_URL, **memory}
    if context.get("client_id"):
        entry["client_id"] = context["client_id"]
    if context.get("client_secret"):
        entry["client_secret"] = env_secret(context["client_secret"])
    return entry


def infra_entry(url: str, scenario: str, context: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The one infra server entry for ``url`` (docs/tool-server-registry.md)."""
    entry: dict[str, Any] = {
        "name": SERVER,
        "protocol": "mcp",
        "transport": "streamable-http",
        "url": url,
        "connect_timeout_seconds": 20,
    }
    answers = ANSWERS.get(scenario)
    if answers:
        entry["client_capabilities"] = list(answers)
    if scenario.startswith("auth/"):
        entry["auth"] = auth_entry(scenario, context or {})
    return entry


def browser(authorization_url: str) -> None:
    """The person's browser: open the authorization page and follow its redirects.

    The suite's authorization server approves at once, so the last redirect lands on the
    runtime's loopback listener, which takes the code from there.
    """
    with httpx2.Client(follow_redirects=True, timeout=10) as client:
        client.get(authorization_url)


def write_infra(folder: Path, url: str, scenario: str) -> Path:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    document = {
        "apiVersion": "toolgen/v1",
        "kind": "ToolServerRegistry",
        "metadata": {"name": "conformance"},
        "spec": {"servers": [infra_entry(url, scenario, context)]},
    }
    path = folder / "infra.yaml"
    # JSON is YAML: no quoting rules to get wrong for a URL.
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return path


def accept(requests: list[Any]) -> dict[str, Any]:
    """The user's answer to every input request: accept, leaving each field to its default.

    SEP-1034: the runtime fills in the defaults of the requested schema for fields the user
    left out, so an empty accepted form reaches the server complete.
    """
    answers: dict[str, Any] = {}
    for request in requests:
        if request.method == "elicitation/create":
            answers[request.key] = {"action": "accept", "content": {}}
        elif request.method == "roots/list":
            answers[request.key] = {"roots": []}
        else:
            raise RuntimeError(f"no answer for {request.method}")
    return answers


def generated_tools(folder: Path, infra: Path, registry: RuntimeRegistry) -> Any:
    """``Tools(registry)`` of a package generated from the live server, answering input with :func:`accept`."""
    out = folder / "generated"
    subprocess.run(
        [sys.executable, "-m", "codegen", "generate", "-q", "--no-cache", "--infra", str(infra),
         "--lock", str(folder / "toolgen.lock.json"), "--out", str(out), "--package", PACKAGE],
        check=True, cwd=folder,
    )  # fmt: skip
    sys.path.insert(0, str(out))
    package = importlib.import_module(PACKAGE)
    return package, package.Tools(registry).with_options(on_input=accept)


def run(url: str, scenario: str) -> None:
    with tempfile.TemporaryDirectory(prefix="toolgen-conformance-") as tmp:
        folder = Path(tmp)
        infra = write_infra(folder, url, scenario)
        # Connecting lists the tools: the handshake and tools/list are what most scenarios judge.
        with RuntimeRegistry.from_sources(infra=[infra], authorize=browser) as registry:
            names = [tool["name"] for tool in registry.list_tools()]
            if scenario in ANSWERS:
                package, tools = generated_tools(folder, infra, registry)
                for name in names:
                    info = package.TOOLS[name]
                    method = getattr(getattr(tools.results, SERVER), info.method)
                    method(**ARGUMENTS.get(name, {}))  # raises a ToolError subclass on failure
                return
            for name in names:
                envelope = registry.call_tool(name, dict(ARGUMENTS.get(name, {})), timeout_seconds=20)
                if envelope.is_error:
                    raise RuntimeError(f"{name}: {envelope.result}")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: client.py SERVER_URL", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    try:
        run(argv[1], scenario)
    except Exception as exc:
        print(f"conformance client ({scenario or 'no scenario'}): {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
