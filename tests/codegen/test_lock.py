"""The lock format as docs/lock.md states it, checked on the repository's own lock."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from gen_helpers import REPO

from codegen.lock import load_lock, render_lock
from codegen.versioning import with_record

LOCK = REPO / "toolgen.lock.json"


def _documented_hash(tool: Any) -> str:
    def canonical(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: canonical(v, k) for k, v in value.items()}
        if isinstance(value, list):
            items = [canonical(v) for v in value]
            return sorted(items) if key == "required" and all(isinstance(v, str) for v in items) else items
        return value

    text = json.dumps(canonical(tool), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_repository_lock_follows_the_documented_format() -> None:
    text = LOCK.read_text(encoding="utf-8")
    data = json.loads(text)
    assert data["toolgen_snapshot"] == 3
    assert set(data) == {"toolgen_snapshot", "servers", "skills", "package"}
    assert data["package"]["version"] == data["package"]["history"][0]["version"]
    for entry in [*data["servers"].values(), data["skills"]]:
        assert set(entry) <= {"tools", "hashes", "inferred"}
        names = [t["name"] for t in entry["tools"]]
        assert names == sorted(names)
        assert entry["hashes"] == {t["name"]: _documented_hash(t) for t in entry["tools"]}
    # The repository's samples give list_cities (no outputSchema) an inferred model, recorded with
    # its sample count; the tools that declare an outputSchema have no entry.
    inferred = data["servers"]["sample"]["inferred"]
    assert set(inferred) == {"list_cities"}
    assert inferred["list_cities"]["kind"] == "model" and inferred["list_cities"]["samples"] == 3
    assert inferred["list_cities"]["schema"]["required"] == ["cities", "total"]
    declared = {t["name"] for t in data["servers"]["sample"]["tools"] if "outputSchema" in t}
    assert declared and not declared & set(inferred)
    # Canonical: rendering what was read gives the same bytes.
    lock = load_lock(LOCK)
    assert lock.package is not None
    assert with_record(render_lock(lock.servers, lock.skills, lock.inferred), lock.package) == text


def test_lock_holds_no_url_command_or_secret() -> None:
    text = LOCK.read_text(encoding="utf-8")
    for forbidden in ("mas.samples.mcp_server", "sample-stdio", "connect_timeout", "env:", "Bearer", "127.0.0.1"):
        assert forbidden not in text


def test_required_order_does_not_change_the_hash() -> None:
    tool = {"name": "t", "inputSchema": {"type": "object", "required": ["b", "a"]}}
    same = {"name": "t", "inputSchema": {"required": ["a", "b"], "type": "object"}}
    assert (
        json.loads(render_lock({"s": [tool]}))["servers"]["s"]["hashes"]
        == json.loads(render_lock({"s": [same]}))["servers"]["s"]["hashes"]
    )
