"""The typed test kit (``<package>.testing``, docs/testing.md), used as a user uses it.

Two packages are installed with ``pip install`` (not editable) into a folder of their own and
imported from there: ``captures``, generated from the six shared tools/list captures and their
recorded results, and ``sample_tools``, the repository's package generated from the lock
(``toolgen.lock.json``: a listing these tests did not choose). Every test drives the generated
``Tools``/``AsyncTools`` against ``FakeTools``, as agent code under test would.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from gen_helpers import REPO
from mcp_helpers import sample_stdio_infra

from codegen.cli import main as toolgen

CAPTURES = sorted((REPO / "tests" / "fixtures" / "mcp-tools-list").glob("*.json"))
SAMPLES = REPO / "tests" / "fixtures" / "samples" / "toolgen.samples.json"
PACKAGES = ("captures", "sample_tools")

# The build backend toolgen itself is built with (so pip's cache has it).
_PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.25"]
build-backend = "hatchling.build"

[project]
name = "agent-tools"
version = "0"

[tool.hatch.build.targets.wheel]
packages = ["captures", "sample_tools"]
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two packages, built and installed by pip (not editable) into a folder of their own."""
    project = tmp_path_factory.mktemp("project")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)  # no pyproject.toml above: only these flags count
        args = [a for path in CAPTURES for a in ("--mcp-json", str(path))]
        assert toolgen(["generate", "-q", "--no-cache", *args, "--samples", str(SAMPLES), "--package", "captures",
                        "--out", str(project)]) == 0  # fmt: skip
    shutil.copytree(REPO / "generated" / "sample_tools", project / "sample_tools",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    (project / "pyproject.toml").write_text(_PYPROJECT, encoding="utf-8")
    target = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps",
         "--disable-pip-version-check", "--target", str(target), str(project)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert (target / "captures" / "testing.py").is_file() and (target / "captures" / "_testing_data.py").is_file()
    return target


def _forget(name: str) -> None:
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]


@pytest.fixture(scope="module")
def installed(site: Path) -> Iterator[dict[str, ModuleType]]:
    """``{name: package}`` and ``{name.testing: its kit}``, imported from the installed folder."""
    for name in PACKAGES:
        _forget(name)
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    try:
        found: dict[str, ModuleType] = {}
        for name in PACKAGES:
            found[name] = importlib.import_module(name)
            assert Path(found[name].__file__ or "").is_relative_to(site), found[name].__file__
            found[f"{name}.testing"] = importlib.import_module(f"{name}.testing")
            found[f"{name}.outputs"] = importlib.import_module(f"{name}.outputs")
        yield found
    finally:
        sys.path.remove(str(site))
        for name in PACKAGES:
            _forget(name)


@pytest.fixture
def cap(installed: dict[str, ModuleType]) -> ModuleType:
    return installed["captures"]


@pytest.fixture
def kit(installed: dict[str, ModuleType]) -> ModuleType:
    return installed["captures.testing"]


@pytest.fixture
def out(installed: dict[str, ModuleType]) -> ModuleType:
    return installed["captures.outputs"]


def _samples() -> dict[tuple[str, str], dict[str, Any]]:
    newest: dict[tuple[str, str], dict[str, Any]] = {}
    for sample in json.loads(SAMPLES.read_text(encoding="utf-8"))["samples"]:
        newest[(sample["source"], sample["tool"])] = sample["result"]
    return newest


# --- the provider ---------------------------------------------------------------------------------


def test_list_tools_is_the_listing_as_locked(installed: dict[str, ModuleType]) -> None:
    from mas.runtime.contracts.tool_contract import tool_entry_from_mcp
    from mas.runtime.lockfile import canonical_tool

    fake = installed["captures.testing"].FakeTools()
    listed = {t["name"]: t for path in CAPTURES for t in json.loads(path.read_text(encoding="utf-8"))["tools"]}
    assert fake.list_tools() == [tool_entry_from_mcp(canonical_tool(listed[name])) for name in sorted(listed)]
    assert [t["name"] for t in fake.list_mcp_tools()] == sorted(listed)
    # The package generated from the lock lists exactly the lock's tools (and the YAML's).
    lock = json.loads((REPO / "toolgen.lock.json").read_text(encoding="utf-8"))
    locked = {t["name"]: t for t in lock["servers"]["sample"]["tools"]}
    sample_fake = installed["sample_tools.testing"].FakeTools()
    mcp = {t["name"]: t for t in sample_fake.list_mcp_tools()}
    assert {name: mcp[name] for name in locked} == locked
    assert {t["name"] for t in sample_fake.list_tools()} == set(installed["sample_tools"].TOOLS)


def test_an_unknown_tool_and_bad_arguments_are_envelopes_as_from_a_registry(kit: ModuleType, cap: ModuleType) -> None:
    fake = kit.FakeTools()
    assert fake.call_tool("nope", {})["metadata"]["error_kind"] == "unknown_tool"
    refused = fake.call_tool("get_current_time", {"timezone": 3})
    assert refused["metadata"]["error_kind"] == "invalid_arguments"
    assert "/timezone: 3 is not of type 'string'" in refused["result"]
    assert fake.calls == []  # refused before the tool: no call was made


# --- defaults -----------------------------------------------------------------------------------------


def test_a_tool_nobody_set_answers_with_its_newest_recorded_result(cap: ModuleType, kit: ModuleType) -> None:
    fake = kit.FakeTools()
    tools = cap.Tools(fake)
    recorded = _samples()
    now = tools.time.get_current_time(timezone="Europe/Paris")
    assert now.model_dump() == recorded[("time", "get_current_time")]["structuredContent"]
    listing = tools.filesystem.list_directory(path="/srv")
    assert listing.content == recorded[("filesystem", "list_directory")]["structuredContent"]["content"]
    assert tools.everything.echo(message="hi") == recorded[("everything", "echo")]["content"][0]["text"]


def test_a_tool_without_samples_answers_with_a_schema_valid_example_deterministic_under_a_seed(
    cap: ModuleType, kit: ModuleType
) -> None:
    first = cap.Tools(kit.FakeTools()).filesystem.write_file(path="/a", content="x")
    again = cap.Tools(kit.FakeTools()).filesystem.write_file(path="/b", content="y")
    other = cap.Tools(kit.FakeTools(seed=7)).filesystem.write_file(path="/a", content="x")
    assert type(first).__name__ == "FilesystemWriteFileOutput" and isinstance(first.content, str)
    assert first == again  # the same seed, the same example, whatever the arguments
    assert other != first
    # A tool with neither a schema nor a sample answers with text, typed as its method says.
    untyped = cap.Tools(kit.FakeTools()).everything.toggle_simulated_logging()
    assert type(untyped).__name__ == "ToolOutput" and untyped.text == "toggle-simulated-logging (fake)"


def test_strict_mode_fails_the_test_on_a_tool_that_was_not_set(cap: ModuleType, kit: ModuleType) -> None:
    fake = kit.FakeTools(strict=True)
    with pytest.raises(kit.FakeToolsError, match=r"tool 'get_current_time' was called but the test set nothing"):
        cap.Tools(fake).time.get_current_time(timezone="UTC")
    assert isinstance(fake.failures[0], AssertionError)
    with pytest.raises(kit.FakeToolsError):
        fake.check()  # a swallowed failure comes back
    fake.time.get_current_time.fails("timeout")
    with pytest.raises(cap.ToolTimeoutError):
        cap.Tools(fake).time.get_current_time(timezone="UTC")


# --- setters --------------------------------------------------------------------------------------------


def _now(out: ModuleType, zone: str = "UTC") -> Any:
    return out.TimeGetCurrentTimeOutput(timezone=zone, datetime="2026-01-01T00:00:00Z", day_of_week="Thursday",
                                        is_dst=False)  # fmt: skip


def test_returns_answers_and_calls(cap: ModuleType, kit: ModuleType, out: ModuleType) -> None:
    fake = kit.FakeTools()
    handle = fake.time.get_current_time.returns(_now(out))
    tools = cap.Tools(fake)
    assert tools.time.get_current_time(timezone="UTC") == _now(out)
    whole = tools.results.time.get_current_time(timezone="Asia/Tokyo")
    assert whole.value == _now(out) and whole.envelope.structured_content["timezone"] == "UTC"
    handle.answers(lambda args: _now(out, args["timezone"]))
    assert tools.time.get_current_time(timezone="Europe/Oslo").timezone == "Europe/Oslo"
    assert asyncio.run(cap.AsyncTools(fake).time.get_current_time(timezone="Asia/Seoul")).timezone == "Asia/Seoul"
    assert [c.arguments for c in handle.calls] == [{"timezone": z} for z in ("UTC", "Asia/Tokyo", "Europe/Oslo",
                                                                             "Asia/Seoul")]  # fmt: skip
    handle.calls.assert_calls({"timezone": "UTC"}, {"timezone": "Asia/Tokyo"}, {"timezone": "Europe/Oslo"},
                              {"timezone": "Asia/Seoul"})  # fmt: skip
    with pytest.raises(kit.FakeToolsError) as caught:
        handle.calls.assert_calls({"timezone": "UTC"}, {"timezone": "Asia/Kyoto"}, {"timezone": "Europe/Oslo"},
                                  {"timezone": "Asia/Seoul"})  # fmt: skip
    assert str(caught.value) == 'get_current_time: call 2 of 4: /timezone: expected "Asia/Kyoto", got "Asia/Tokyo"'
    with pytest.raises(kit.FakeToolsError, match=r"^get_current_time: expected 1 call\(s\), got 4$"):
        handle.calls.assert_called_once_with({"timezone": "UTC"})
    assert [c.tool for c in fake.calls] == ["get_current_time"] * 4


def test_an_answer_fn_may_raise_the_packages_errors(cap: ModuleType, kit: ModuleType) -> None:
    fake = kit.FakeTools()

    def refuse(args: Any) -> Any:
        raise cap.ToolArgumentsError("get_current_time", {"is_error": True, "result": f"no zone {args['timezone']}"})

    fake.time.get_current_time.answers(refuse)
    with pytest.raises(cap.ToolArgumentsError, match="no zone Mars") as caught:
        cap.Tools(fake).time.get_current_time(timezone="Mars")
    assert caught.value.kind == "invalid_arguments"


#: Every failure kind of the contract and the class a real failure of that kind raises.
KINDS = [("tool_error", "ToolCallError"), ("invalid_arguments", "ToolArgumentsError"),
         ("unknown_tool", "ToolNotFoundError"), ("timeout", "ToolTimeoutError"), ("cancelled", "ToolCancelledError"),
         ("unavailable", "ToolUnavailableError"), ("protocol", "ToolProtocolError")]  # fmt: skip


@pytest.mark.parametrize(("kind", "error"), KINDS)
def test_every_failure_kind_raises_its_class(cap: ModuleType, kit: ModuleType, kind: str, error: str) -> None:
    fake = kit.FakeTools()
    fake.time.get_current_time.fails(kind, message=f"it went {kind}")
    with pytest.raises(getattr(cap, error)) as caught:
        cap.Tools(fake).time.get_current_time(timezone="UTC")
    assert type(caught.value).__name__ == error and caught.value.kind == kind
    assert caught.value.message == f"it went {kind}"
    assert set(kit.FAILURE_KINDS) == {k for k, _ in KINDS}


def test_fails_refuses_a_kind_the_package_does_not_have(kit: ModuleType) -> None:
    with pytest.raises(TypeError, match="fails: kind must be one of"):
        kit.FakeTools().time.get_current_time.fails("exploded")


def test_asks_puts_an_input_round_to_on_input_then_answers(cap: ModuleType, kit: ModuleType, out: ModuleType) -> None:
    fake = kit.FakeTools()
    schema = {"type": "object", "properties": {"zone": {"type": "string"}}}
    fake.time.get_current_time.returns(_now(out)).asks("Which zone?", schema).asks("Sure?")
    asked: list[Any] = []

    def on_input(requests: list[Any]) -> dict[str, Any]:
        asked.extend(requests)
        return {r.key: {"action": "accept", "content": {"zone": "UTC"}} for r in requests}

    assert cap.Tools(fake).with_options(on_input=on_input).time.get_current_time(timezone="UTC") == _now(out)
    assert [type(r).__name__ for r in asked] == ["ElicitationRequest", "ElicitationRequest"]
    assert [r.message for r in asked] == ["Which zone?", "Sure?"] and asked[0].requested_schema == schema
    call = fake.time.get_current_time.calls[0]
    assert call.input_responses == [{"q1": {"action": "accept", "content": {"zone": "UTC"}}},
                                    {"q2": {"action": "accept", "content": {"zone": "UTC"}}}]  # fmt: skip
    assert len(fake.calls) == 1  # the rounds belong to the one call
    with pytest.raises(cap.ToolInputRequiredError, match="needs input: q1"):
        cap.Tools(fake).time.get_current_time(timezone="UTC")  # nobody answers


def test_asks_on_the_async_path(cap: ModuleType, kit: ModuleType, out: ModuleType) -> None:
    fake = kit.FakeTools()
    fake.time.get_current_time.returns(_now(out)).asks("Which zone?")

    async def on_input(requests: list[Any]) -> dict[str, Any]:
        return {r.key: {"action": "decline"} for r in requests}

    async def run() -> Any:
        return await cap.AsyncTools(fake).with_options(on_input=on_input).time.get_current_time(timezone="UTC")

    assert asyncio.run(run()) == _now(out)
    assert fake.time.get_current_time.calls[0].input_responses == [{"q1": {"action": "decline"}}]


def test_runs_as_task_drives_tools_tasks_and_the_inline_wait(cap: ModuleType, kit: ModuleType) -> None:
    fake = kit.FakeTools()
    report = cap.ToolOutput(content=[{"type": "text", "text": "tides: done"}])
    fake.everything.simulate_research_query.returns(report).runs_as_task(states=["working", "working", "completed"])
    tools = cap.Tools(fake)
    task = tools.tasks.everything.simulate_research_query(topic="tides")
    assert task.id == "fake-task-1"
    assert [task.status().state for _ in range(3)] == ["working", "completed", "completed"]
    assert task.wait().text == "tides: done"
    # The plain method of a task-required tool waits inline.
    assert tools.everything.simulate_research_query(topic="tides").text == "tides: done"
    # Cancelled, then waited for: the cancel's error class.
    task = tools.tasks.everything.simulate_research_query(topic="moons")
    assert task.cancel().state == "cancelled"
    with pytest.raises(cap.ToolCancelledError):
        task.wait()
    fake.everything.simulate_research_query.runs_as_task(states=["working", "failed"])
    with pytest.raises(cap.ToolCallError, match="failed"):
        tools.tasks.everything.simulate_research_query(topic="x").wait()
    # A task that needs input on the way asks on_input during the wait.
    fake.everything.simulate_research_query.runs_as_task(states=["working", "input_required", "completed"])
    answered = tools.with_options(on_input=lambda requests: {r.key: {"action": "accept"} for r in requests})
    assert answered.tasks.everything.simulate_research_query(topic="y").wait().text == "tides: done"
    assert fake.everything.simulate_research_query.calls[-1].input_responses == [{"q1": {"action": "accept"}}]
    topics = [call.arguments["topic"] for call in fake.everything.simulate_research_query.calls]
    assert topics == ["tides", "tides", "moons", "x", "y"]


def test_runs_as_task_on_the_async_handles(cap: ModuleType, kit: ModuleType) -> None:
    fake = kit.FakeTools()
    fake.everything.simulate_research_query.runs_as_task(states=["working", "completed"])

    async def run() -> tuple[str, str]:
        task = await cap.AsyncTools(fake).tasks.everything.simulate_research_query(topic="tides")
        first = (await task.status()).state
        return first, (await task.wait()).text

    assert asyncio.run(run()) == ("completed", "simulate-research-query (fake)")


def test_runs_as_task_refuses_states_that_do_not_end(kit: ModuleType) -> None:
    with pytest.raises(TypeError, match="runs_as_task: states must"):
        kit.FakeTools().everything.simulate_research_query.runs_as_task(states=["working"])


# --- every answer fits the lock ------------------------------------------------------------------------------


def test_an_answer_that_does_not_fit_the_output_schema_names_the_tool_and_the_pointer(
    cap: ModuleType, kit: ModuleType, out: ModuleType
) -> None:
    fake = kit.FakeTools()
    bad = out.TimeGetCurrentTimeOutput.model_construct(timezone="UTC", datetime="x", day_of_week="Monday", is_dst="no")
    with pytest.raises(kit.FakeToolsError) as caught:
        fake.time.get_current_time.returns(bad)  # fails at once, where the test set it
    assert str(caught.value) == (
        "tool 'get_current_time': the answer does not fit the output schema of the lock at /is_dst: "
        "'no' is not of type 'boolean'"
    )
    assert (caught.value.tool, caught.value.pointer) == ("get_current_time", "/is_dst")
    nested = out.MemoryReadGraphOutput.model_construct(entities=[{"name": "A", "entityType": "p", "observations": [3]}],
                                                       relations=[])  # fmt: skip
    fake.memory.read_graph.answers(lambda args: nested)  # an answers fn is checked when it answers
    with pytest.raises(kit.FakeToolsError, match=r"tool 'read_graph'.* at /entities/0/observations/0: 3 is not of"):
        cap.Tools(fake).memory.read_graph()
    assert fake.failures and fake.failures[-1].pointer == "/entities/0/observations/0"


def test_a_recorded_result_that_no_longer_fits_the_lock_fails(kit: ModuleType) -> None:
    fake = kit.FakeTools()
    fake._listed["get_current_time"]["sample"] = {"structuredContent": {"timezone": 1}, "isError": False}
    with pytest.raises(kit.FakeToolsError, match=r"its newest recorded result does not fit .* at /: 'datetime' is"):
        fake.call_tool("get_current_time", {"timezone": "UTC"})


def test_a_value_of_another_type_fails_at_run_time_too(kit: ModuleType, out: ModuleType) -> None:
    with pytest.raises(kit.FakeToolsError, match="answers with TimeGetCurrentTimeOutput, not str"):
        kit.FakeTools().time.get_current_time.returns("12:00")


def test_a_tool_absent_from_the_package_is_absent_from_the_fake(kit: ModuleType) -> None:
    fake = kit.FakeTools()
    with pytest.raises(AttributeError):
        fake.time.get_current_tme  # noqa: B018
    with pytest.raises(KeyError, match="no tool 'get_current_tme'"):
        fake.handle("get_current_tme")


def test_importing_the_package_imports_no_part_of_the_kit(site: Path) -> None:
    probe = (
        "import sys, captures, sample_tools\n"
        "print(sorted(m for m in sys.modules if m.endswith(('testing', '_testing_data', '_fake'))"
        " or m.split('.')[0] in ('jsonschema', 'polyfactory', 'faker', 'pytest')))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=site, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# --- record and replay ----------------------------------------------------------------------------------

SECRET = "kit-secret-7f3a9c"  # a secret the runtime knows: never in a cassette


@pytest.fixture(scope="module")
def cassette(installed: dict[str, ModuleType], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Calls recorded through the real registry and the repository's sample server over stdio."""
    from mas.runtime import redact
    from mas.runtime.registry import RuntimeRegistry

    redact.remember([SECRET])  # as the registry does with an infra entry's header values
    path = tmp_path_factory.mktemp("cassettes") / "run.json"
    infra, tools = Path(sample_stdio_infra()), REPO / "library-samples" / "tools"  # the server forked (mcp_helpers)
    st = installed["sample_tools"]
    with RuntimeRegistry.from_sources(infra=[infra], tools=[tools]) as registry:
        with installed["sample_tools.testing"].Recorder(registry, path) as recorder:
            typed = st.Tools(recorder)
            typed.sample.get_weather(city="Paris")
            typed.sample.get_weather(city=SECRET)
            typed.sample.list_cities(country="FR")
            typed.skills.unit_convert(value=3, from_unit="km", to_unit="mi")
    return path


def test_a_recorder_keeps_every_exchange_with_secrets_blanked(cassette: Path) -> None:
    text = cassette.read_text(encoding="utf-8")
    doc = json.loads(text)
    assert SECRET not in text and "***" in text
    assert doc["package"] == "sample_tools" and doc["version"] == 1
    assert [(c["tool"], c["arguments"]) for c in doc["calls"]] == [
        ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "***"}), ("list_cities", {"country": "FR"}),
        ("unit_convert", {"value": 3, "from_unit": "km", "to_unit": "mi"}),
    ]  # fmt: skip
    assert doc["calls"][0]["envelope"]["structured_content"]["city"] == "Paris"
    assert text == json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"  # canonical


def test_replay_answers_the_same_calls_in_order(installed: dict[str, ModuleType], cassette: Path) -> None:
    st, kit = installed["sample_tools"], installed["sample_tools.testing"]
    fake = kit.FakeTools.replay(cassette)
    tools = st.Tools(fake)
    assert tools.sample.get_weather(city="Paris").city == "Paris"
    assert tools.sample.get_weather(city="***").city == "***"
    cities = tools.sample.list_cities(country="FR")
    assert not isinstance(cities, st.ToolOutput) and {c.country for c in cities.cities} == {"FR"}
    assert tools.skills.unit_convert(value=3, from_unit="km", to_unit="mi").value == pytest.approx(1.864, 0.01)
    fake.assert_replayed()
    assert [c.tool for c in fake.calls] == ["get_weather", "get_weather", "list_cities", "unit_convert"]


def test_replay_fails_with_one_line_at_the_first_unexpected_call(
    installed: dict[str, ModuleType], cassette: Path
) -> None:
    st, kit = installed["sample_tools"], installed["sample_tools.testing"]
    tools = st.Tools(kit.FakeTools.replay(cassette))
    tools.sample.get_weather(city="Paris")
    with pytest.raises(kit.FakeToolsError) as caught:
        tools.sample.get_weather(city="Berlin")
    assert str(caught.value) == 'replay: call 2 (get_weather): arguments /city: expected "***", got "Berlin"'
    tools = st.Tools(kit.FakeTools.replay(cassette))
    with pytest.raises(kit.FakeToolsError, match=r"^replay: call 1: expected tool 'get_weather', got 'list_cities'$"):
        tools.sample.list_cities(country="FR")
    fake = kit.FakeTools.replay(cassette)
    st.Tools(fake).sample.get_weather(city="Paris")
    with pytest.raises(kit.FakeToolsError, match=r"^replay: call 2 of 4 \('get_weather'\) was never made$"):
        fake.assert_replayed()
    # Not strict: a call that was not recorded is answered as usual.
    loose = kit.FakeTools.replay(cassette, strict=False)
    assert st.Tools(loose).sample.list_cities(country="JP") is not None


def _project(tmp_path: Path, cassettes: dict[str, Any]) -> Path:
    time_json = REPO / "tests" / "fixtures" / "mcp-tools-list" / "time.json"
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.toolgen]\nmcp_json = ["{time_json.as_posix()}"]\nout = "gen"\npackage = "clock"\n'
        'cassettes = ["cassettes"]\n',
        encoding="utf-8",
    )
    (tmp_path / "cassettes").mkdir()
    for name, doc in cassettes.items():
        (tmp_path / "cassettes" / name).write_text(json.dumps(doc), encoding="utf-8")
    return tmp_path


_NOW = {"timezone": "UTC", "datetime": "2026-01-01T00:00:00Z", "day_of_week": "Thursday", "is_dst": False}


def _call(tool: str, arguments: dict[str, Any], structured: Any) -> dict[str, Any]:
    envelope = {"status": "success", "result": structured, "is_error": False, "structured_content": structured}
    return {"tool": tool, "arguments": arguments, "options": {}, "envelope": envelope}


def test_generate_check_reports_a_cassette_whose_tools_drifted(tmp_path: Path) -> None:
    from gen_helpers import toolgen_in_process

    good = {"version": 1, "calls": [_call("get_current_time", {"timezone": "UTC"}, _NOW)]}
    project = _project(tmp_path, {"good.json": good})
    assert toolgen_in_process(project, "-q").returncode == 0
    done = toolgen_in_process(project, "--offline", "--check")
    assert done.returncode == 0, done.stdout + done.stderr
    drifted = {"version": 1, "calls": [
        _call("get_current_time", {"timezone": "UTC"}, _NOW),
        _call("get_current_time", {"timezone": 3}, _NOW),
        _call("get_current_time", {"timezone": "UTC"}, {**_NOW, "is_dst": "no"}),
        _call("get_time", {}, _NOW),
    ]}  # fmt: skip
    (project / "cassettes" / "old.json").write_text(json.dumps(drifted), encoding="utf-8")
    done = toolgen_in_process(project, "--offline", "--check")
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "toolgen: cassette cassettes/old.json: /calls/1/arguments/timezone: 3 is not of type 'string'",
        "toolgen: cassette cassettes/old.json: /calls/2/envelope: the result does not fit the output schema at "
        "/is_dst: 'no' is not of type 'boolean'",
        "toolgen: cassette cassettes/old.json: /calls/3/tool: tool 'get_time' is not in the package (gone, or "
        "renamed, since)",
        "toolgen: record the cassettes again (the package's testing.Recorder) or edit them",
    ]
    (project / "cassettes" / "bad.json").write_text('{"version": 1, "calls": [{"tool": 3}]}', encoding="utf-8")
    done = toolgen_in_process(project, "--offline", "--check")
    assert done.returncode == 2 and done.stderr.strip() == (
        "toolgen: error: cassettes/bad.json: /calls/0/tool: expected the tool's wire name"
    ), done.stderr


# --- drift and pinning -------------------------------------------------------------------------------------


def _pinned_infra(tmp_path: Path) -> Path:
    shutil.copyfile(REPO / "toolgen.lock.json", tmp_path / "toolgen.lock.json")
    text = (REPO / "library-samples" / "infra" / "sample-stdio.yaml").read_text(encoding="utf-8")
    text += "      pin: refuse\n      lock: toolgen.lock.json\n"
    (tmp_path / "infra.yaml").write_text(text, encoding="utf-8")
    return tmp_path / "infra.yaml"


def test_a_listing_change_is_refused_by_pinning(installed: dict[str, ModuleType], tmp_path: Path) -> None:
    from mas.runtime.registry import RuntimeRegistry

    st, kit = installed["sample_tools"], installed["sample_tools.testing"]
    infra = _pinned_infra(tmp_path)
    fake = kit.FakeTools()
    with RuntimeRegistry.from_sources(infra=[infra], mcp_factory=lambda config: fake.source(config.name)) as registry:
        assert st.Tools(registry).sample.get_weather(city="Paris") is not None  # as locked: called
    changed = kit.FakeTools().with_listing_change("get_weather", description="Weather, now with pollen counts.")
    served = changed.source("sample")
    with RuntimeRegistry.from_sources(infra=[infra], mcp_factory=lambda config: served) as registry:
        tools = st.Tools(registry)
        with pytest.raises(st.ToolUnavailableError, match="differs from the lock toolgen.lock.json at /description"):
            tools.sample.get_weather(city="Paris")
        assert changed.sample.get_weather.calls == []  # refused before anything reached the tool
        assert tools.sample.list_cities(country="FR") is not None  # the other tools still answer
    gone = kit.FakeTools().with_listing_change("get_weather", remove=True)
    assert "get_weather" not in {t["name"] for t in gone.list_tools()}


# --- the pytest plugin ------------------------------------------------------------------------------------

_USER_TESTS = """
import pytest
from captures import Tools as CaptureTools
from sample_tools import Tools
from sample_tools.outputs import SampleGetWeatherOutput

PARIS = SampleGetWeatherOutput(city="Paris", conditions="clear", humidity=40, temperature=21.5)


def test_the_ini_package(fake_tools):
    fake_tools.sample.get_weather.returns(PARIS)
    assert Tools(fake_tools).sample.get_weather(city="Paris") == PARIS


@pytest.mark.toolgen(package="captures", strict=True)
def test_the_marker_names_package_and_options(fake_tools):
    CaptureTools(fake_tools).time.get_current_time(timezone="UTC")


def test_a_wrong_answer_fails_where_it_is_set(fake_tools):
    fake_tools.sample.get_weather.returns(SampleGetWeatherOutput.model_construct(city="Paris", conditions="x",
                                                                                  humidity="lots", temperature=1))


def test_a_swallowed_failure_fails_the_test_when_it_ends(make_fake_tools):
    fake = make_fake_tools("sample_tools", strict=True)
    try:
        Tools(fake).sample.get_weather(city="Paris")
    except AssertionError:
        pass  # agent code that swallows everything


def test_a_call_assertion_names_the_first_difference(fake_tools):
    Tools(fake_tools).sample.get_weather(city="Paris")
    fake_tools.sample.get_weather.calls.assert_calls({"city": "Rome"})
"""


@pytest.mark.full  # a pytest run of its own; the kit's fixtures are tested in-process in the fast tier
def test_the_pytest_plugin_builds_fakes_and_reports_their_failures_readably(site: Path, tmp_path: Path) -> None:
    (tmp_path / "test_agent.py").write_text(_USER_TESTS, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\ntoolgen_package = sample_tools\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--tb=short", "-p", "no:xdist",
         "test_agent.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**_env_without_pythonpath(), "PYTHONPATH": str(site)},
    )  # fmt: skip
    report = done.stdout
    assert done.returncode == 1, report + done.stderr
    assert "3 failed, 2 passed, 1 error" in report, report
    assert ("E   captures._runtime._fake.FakeToolsError: tool 'get_current_time' was called but the test set nothing "
            "for it (FakeTools(strict=True))") in report  # fmt: skip
    assert ("E   sample_tools._runtime._fake.FakeToolsError: tool 'get_weather': the answer does not fit the output "
            "schema of the lock at /humidity: 'lots' is not of type 'integer'") in report  # fmt: skip
    assert (
        'E   sample_tools._runtime._fake.FakeToolsError: get_weather: call 1 of 1: /city: expected "Rome", got "Paris"'
        in report
    )
    assert "ERROR at teardown of test_a_swallowed_failure_fails_the_test_when_it_ends" in report
    assert "_fake.py" not in report  # the kit's own frames are hidden: the test's lines show


def _env_without_pythonpath() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}


def test_the_kit_imports_no_pytest(site: Path) -> None:
    probe = "import sys, sample_tools.testing, captures.testing\nprint('pytest' in sys.modules)\n"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=site, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


# --- code mode on fakes ------------------------------------------------------------------------------------

_WARMEST = """
from tools import sample

warmest = None
for city in ["Paris", "Berlin", "Osaka"]:
    w = await sample.get_weather(city=city)
    if warmest is None or w["temperature"] > warmest["temperature"]:
        warmest = w
warmest["city"]
"""


_CAUGHT = """
from tools import sample

message = ""
try:
    await sample.list_cities()
except RuntimeError as e:
    message = str(e)
message
"""


def test_code_mode_runs_agent_snippets_against_fakes(installed: dict[str, ModuleType]) -> None:
    from mas.runtime.code_mode import CodeMode

    out, kit = installed["sample_tools.outputs"], installed["sample_tools.testing"]
    degrees = {"Paris": 21.5, "Berlin": 18.0, "Osaka": 27.0}
    fake = kit.FakeTools(strict=True)
    fake.sample.get_weather.answers(
        lambda args: out.SampleGetWeatherOutput(
            city=args["city"], conditions="clear", humidity=50, temperature=degrees[args["city"]]
        )  # fmt: skip
    )
    fake.sample.list_cities.fails("timeout", message="too slow")
    with CodeMode(fake, package="sample_tools") as mode:
        run = mode.run(_WARMEST)
        assert run.ok and run.value == "Osaka", run.error
        assert [c.arguments for c in run.calls] == [{"city": c} for c in degrees]
        fake.sample.get_weather.calls.assert_calls({"city": "Paris"}, {"city": "Berlin"}, {"city": "Osaka"})
        caught = mode.run(_CAUGHT)
        assert caught.ok and caught.value.startswith("timeout: tool 'list_cities' timed out: too slow"), caught
        checked = mode.run(_WARMEST.replace('w["temperature"]', 'w["temp"]'))
        assert checked.error is not None and checked.error.kind == "check" and checked.calls == []
    assert len(fake.sample.get_weather.calls) == 3  # the failed check sent nothing
