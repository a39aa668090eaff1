"""SkillToolProvider: YAML-declared tools calling Python handlers."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from mas.runtime.config import ConfigError
from mas.runtime.skills import SkillToolProvider
from mas.runtime.yaml_source import load_tool_documents

HANDLERS = """
import asyncio
import time

CALLS = []

def add(a, b):
    CALLS.append(("add", a, b))
    return {"sum": a + b}

async def shout(text):
    await asyncio.sleep(0)
    return text.upper()

def boom(**kwargs):
    raise RuntimeError("kaboom")

def slow(seconds):
    time.sleep(seconds)
    return "done"

not_callable = 42
"""


def tool_yaml(name: str, handler: str | None, *, params: str = "{type: object}", extra: str = "") -> str:
    handler_line = f"  handler: {handler}\n" if handler else ""
    return (
        f"kind: Tool\nmetadata:\n  name: {name}\nspec:\n  description: {name} tool\n"
        f"  parameters: {params}\n{extra}{handler_line}"
    )


ADD_PARAMS = "{type: object, properties: {a: {type: integer}, b: {type: integer}}, required: [a, b]}"


@pytest.fixture
def handlers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An importable handler module in a temporary folder; its name is returned."""
    (tmp_path / "pkg_skill_handlers.py").write_text(textwrap.dedent(HANDLERS), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "pkg_skill_handlers"
    sys.modules.pop("pkg_skill_handlers", None)


def provider_for(tmp_path: Path, *docs: str) -> SkillToolProvider:
    path = tmp_path / "tools.yaml"
    path.write_text("---\n".join(docs), encoding="utf-8")
    return SkillToolProvider(load_tool_documents([path]))


def test_sync_handler_called_with_arguments(tmp_path: Path, handlers: str) -> None:
    out_schema = "  output_schema: {type: object}\n"
    provider = provider_for(tmp_path, tool_yaml("add", f"{handlers}:add", params=ADD_PARAMS, extra=out_schema))
    envelope = provider.call_tool("add", {"a": 2, "b": 3})
    assert envelope.to_dict() == {
        "status": "success",
        "result": {"sum": 5},
        "is_error": False,
        "result_mode": "inline",
        "execution_mode": "sync",
        "structured_content": {"sum": 5},
    }
    assert sys.modules[handlers].CALLS == [("add", 2, 3)]


def test_handler_is_imported_lazily_on_first_call(tmp_path: Path, handlers: str) -> None:
    provider = provider_for(tmp_path, tool_yaml("add", f"{handlers}:add", params=ADD_PARAMS))
    assert handlers not in sys.modules
    assert provider.list_tools()[0]["name"] == "add"
    assert handlers not in sys.modules
    provider.call_tool("add", {"a": 1, "b": 1})
    assert handlers in sys.modules


def test_coroutine_handler_from_sync_and_async(tmp_path: Path, handlers: str) -> None:
    params = "{type: object, properties: {text: {type: string}}}"
    provider = provider_for(tmp_path, tool_yaml("shout", f"{handlers}:shout", params=params))
    assert provider.call_tool("shout", {"text": "hi"}).result == "HI"
    assert asyncio.run(provider.acall_tool("shout", {"text": "hey"})).result == "HEY"


def test_sync_handler_from_async_runs_in_a_thread(tmp_path: Path, handlers: str) -> None:
    provider = provider_for(tmp_path, tool_yaml("add", f"{handlers}:add", params=ADD_PARAMS))
    envelope = asyncio.run(provider.acall_tool("add", {"a": 4, "b": 5}))
    assert (envelope.is_error, envelope.result) == (False, {"sum": 9})


def test_invalid_arguments_name_the_field(tmp_path: Path, handlers: str) -> None:
    provider = provider_for(tmp_path, tool_yaml("add", f"{handlers}:add", params=ADD_PARAMS))
    envelope = provider.call_tool("add", {"a": 1, "b": "two"})
    assert envelope.is_error is True
    assert envelope.result == "invalid arguments for tool 'add': /b: 'two' is not of type 'integer'"
    assert sys.modules.get(handlers) is None or sys.modules[handlers].CALLS == []


def test_raising_handler_gives_an_error_envelope(tmp_path: Path, handlers: str) -> None:
    provider = provider_for(tmp_path, tool_yaml("boom", f"{handlers}:boom"))
    assert provider.call_tool("boom", {}).result == "tool 'boom' failed: RuntimeError: kaboom"
    assert asyncio.run(provider.acall_tool("boom", {})).result == "tool 'boom' failed: RuntimeError: kaboom"


def test_missing_module_is_an_error_envelope_not_an_exception(tmp_path: Path) -> None:
    provider = provider_for(tmp_path, tool_yaml("ghost", "no_such_module_xyz:run"))
    envelope = provider.call_tool("ghost", {})
    assert envelope.is_error is True
    assert envelope.result == (
        "cannot load handler 'no_such_module_xyz:run' for tool 'ghost': "
        "ModuleNotFoundError: No module named 'no_such_module_xyz'"
    )


def test_resolve_raises_with_the_handler_line(tmp_path: Path, handlers: str) -> None:
    provider = provider_for(
        tmp_path, tool_yaml("add", f"{handlers}:add", params=ADD_PARAMS), tool_yaml("bad", f"{handlers}:missing")
    )
    with pytest.raises(ConfigError) as info:
        provider.resolve()
    assert str(info.value) == (
        f"{tmp_path / 'tools.yaml'}:15: spec.handler: cannot load handler: "
        f"AttributeError: module '{handlers}' has no attribute 'missing'"
    )


def test_resolve_rejects_a_non_callable_and_a_missing_handler(tmp_path: Path, handlers: str) -> None:
    provider = provider_for(tmp_path, tool_yaml("nc", f"{handlers}:not_callable"))
    with pytest.raises(ConfigError, match="TypeError: handler 'pkg_skill_handlers:not_callable' is not callable"):
        provider.resolve()
    provider = provider_for(tmp_path, tool_yaml("nohandler", None))
    with pytest.raises(ConfigError) as info:
        provider.resolve()
    assert str(info.value) == (
        f"{tmp_path / 'tools.yaml'}:3: metadata.name: cannot load handler: "
        "LookupError: tool 'nohandler' declares no spec.handler"
    )


def test_timeout_in_acall_tool(tmp_path: Path, handlers: str) -> None:
    params = "{type: object, properties: {seconds: {type: number}}}"
    provider = provider_for(
        tmp_path, tool_yaml("slow", f"{handlers}:slow", params=params, extra="  timeout_seconds: 0.05\n")
    )
    envelope = asyncio.run(provider.acall_tool("slow", {"seconds": 0.5}))
    assert envelope.result == "tool 'slow' timed out after 0.05 s"
    envelope = asyncio.run(provider.acall_tool("slow", {"seconds": 0.01}, timeout_seconds=2))
    assert envelope.result == "done"


def test_unknown_tool(tmp_path: Path, handlers: str) -> None:
    provider = provider_for(tmp_path, tool_yaml("add", f"{handlers}:add", params=ADD_PARAMS))
    assert provider.call_tool("sub", {}).result == "unknown tool 'sub' (skills: add)"


def test_sample_handlers_are_deterministic(repo_root: Path) -> None:
    provider = SkillToolProvider(load_tool_documents([repo_root / "library-samples" / "tools"]))
    provider.resolve()
    converted = provider.call_tool("unit_convert", {"value": 100, "from_unit": "F", "to_unit": "C"})
    assert converted.structured_content == {"value": 37.777778, "unit": "C", "category": "temperature"}
    at = {"timezone": "Asia/Kolkata", "at": "2026-01-15T12:00:00Z"}
    assert provider.call_tool("current_time", at).result == {
        "iso": "2026-01-15T17:30:00+05:30",
        "timezone": "Asia/Kolkata",
        "utc_offset": "+05:30",
        "weekday": "Thursday",
    }
    hits = provider.call_tool("web_search", {"query": "time zone names", "max_results": 1}).result
    assert hits == {
        "query": "time zone names",
        "results": [
            {
                "title": "Time zones in Python",
                "url": "https://example.org/python/zoneinfo",
                "snippet": "The zoneinfo module maps IANA time zone names such as Europe/Paris to UTC offsets.",
                "score": 5,
            }
        ],
    }
    text = "Tools are listed. Tools are called by name. The weather is nice. Tools return results."
    summary = provider.call_tool("summarize_text", {"text": text, "max_sentences": 2})
    assert (summary.result, summary.content) == (
        "Tools are listed. Tools are called by name.",
        [{"type": "text", "text": "Tools are listed. Tools are called by name."}],
    )
