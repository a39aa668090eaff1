"""Code mode's limits under load, each against the real sandbox (pydantic-monty), the repo's
generated ``sample_tools`` and the sample MCP server over stdio: the deadline starts when a run
gets its turn (the wait is bounded apart, "busy"), a cancelled run stops its sandbox at once,
sleeps count, a call at the deadline ends the run "timeout" caught or not, ``max_tool_calls``
counts calls, gathered calls share a bounded host pool, output and value are cut, nesting and
values that are not JSON are refused by kind. The MCP face of the same limits (a real client over
stdio and HTTP) is in ``test_code_mode_serve.py``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import import_fresh
from mcp_helpers import stdio_config

from mas.runtime.code_mode import DEFAULT_MAX_TOOL_CALLS, MAX_NESTING, CodeMode, CodeRun
from mas.runtime.contracts.tool_contract import invoke_call_tool
from mas.runtime.mcp.provider import MCPToolProvider
from mas.runtime.registry import RuntimeRegistry

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # a server, a sandbox pool and its type checker

HOSTILE = "n = 0\nwhile True:\n    n += 1\n"
WEATHER = "from tools import sample\nw = await sample.get_weather(city='Paris')\nw['city']\n"


class Recording:
    """The registry, with every call_tool kept, and how many were in flight at most."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.options: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.inflight = self.most = 0

    def call_tool(self, tool_name: str, arguments: dict[str, Any], **kwargs: Any) -> Any:
        with self.lock:
            self.calls.append((tool_name, dict(arguments)))
            self.options.append(kwargs)
            self.inflight += 1
            self.most = max(self.most, self.inflight)
        try:
            return invoke_call_tool(self.inner, tool_name, arguments, **kwargs)
        finally:
            with self.lock:
                self.inflight -= 1

    def clear(self) -> None:
        self.calls.clear()
        self.options.clear()
        self.most = 0


@pytest.fixture(scope="module")
def package() -> Any:
    return import_fresh(REPO / "generated", "sample_tools")


@pytest.fixture(scope="module")
def registry() -> Iterator[Recording]:
    with RuntimeRegistry({"sample": MCPToolProvider(stdio_config("sample"))}) as inner:
        yield Recording(inner)


@pytest.fixture
def recording(registry: Recording) -> Recording:
    registry.clear()
    return registry


@pytest.fixture(scope="module")
def shared(registry: Recording, package: Any) -> Iterator[CodeMode]:
    with CodeMode(registry, package=package) as mode:
        yield mode


def in_threads(mode: CodeMode, codes: list[tuple[str, dict[str, Any]]], gap: float = 0.0) -> list[CodeRun]:
    runs: list[Any] = [None] * len(codes)

    def one(i: int) -> None:
        runs[i] = mode.run(codes[i][0], **codes[i][1])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(codes))]
    for thread in threads:
        thread.start()
        time.sleep(gap)
    for thread in threads:
        thread.join(120)
    return runs


# --- the deadline, the queue, cancellation -------------------------------------------------------


def test_hostile_runs_cannot_make_a_good_run_wait_past_its_limit_and_the_queue_bound(
    recording: Recording, package: Any
) -> None:
    """The fairness test: 4 endless loops on 2 slots; a one-call run sent after them waits for a
    turn (at most the queue bound), then has its whole time limit, and completes."""
    limit, queue = 2.0, 8.0
    with CodeMode(recording, package=package, max_concurrent_runs=2, max_queue_seconds=queue) as mode:
        mode.check(WEATHER)  # the checker warm: the test times the runs, not the checker's start
        start = time.monotonic()
        codes = [(HOSTILE, {"timeout_seconds": limit})] * 4 + [(WEATHER, {"timeout_seconds": limit})]
        runs = in_threads(mode, codes, gap=0.1)
        elapsed = time.monotonic() - start
    assert [r.error.kind if r.error else None for r in runs[:4]] == ["timeout"] * 4
    good = runs[4]
    assert good.error is None, good.error
    assert good.value == "Paris" and recording.calls == [("get_weather", {"city": "Paris"})]
    assert elapsed < limit + queue + 3.0, f"the good run ended after {elapsed:.1f} s"


def test_a_run_that_cannot_get_a_turn_in_time_is_busy_and_says_how_many_are_ahead(
    recording: Recording, package: Any
) -> None:
    with CodeMode(recording, package=package, max_concurrent_runs=1, max_queue_seconds=0.5) as mode:
        mode.check(WEATHER)
        hostile, waiting = in_threads(mode, [(HOSTILE, {"timeout_seconds": 3.0}), (WEATHER, {})], gap=0.5)
    assert hostile.error is not None and hostile.error.kind == "timeout"
    assert waiting.error is not None and waiting.error.kind == "busy", waiting.error
    assert waiting.error.message.startswith("busy, 1 run(s) ahead"), waiting.error.message
    assert recording.calls == [] and waiting.calls == []


def test_a_full_queue_is_busy_at_once(recording: Recording, package: Any) -> None:
    with CodeMode(recording, package=package, max_concurrent_runs=1, max_queued_runs=0) as mode:
        mode.check(WEATHER)
        start = time.monotonic()
        hostile, refused = in_threads(mode, [(HOSTILE, {"timeout_seconds": 3.0}), (WEATHER, {})], gap=0.5)
        assert refused.error is not None and refused.error.kind == "busy", refused.error
        assert "the queue is full" in refused.error.message
        assert hostile.error is not None and hostile.error.kind == "timeout"
        assert time.monotonic() - start < 6.0


def test_a_cancelled_run_stops_its_sandbox_at_once(shared: CodeMode) -> None:
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    start = time.monotonic()
    run = shared.run(HOSTILE, timeout_seconds=30.0, cancel_event=cancel)
    assert run.error is not None and run.error.kind == "cancelled", run.error
    assert time.monotonic() - start < 3.0
    assert shared.run(WEATHER).value == "Paris"  # the pool replaced the stopped worker


def test_a_cancelled_run_cancels_its_call_in_flight(shared: CodeMode, recording: Recording) -> None:
    code = "from tools import sample\nawait sample.count_slowly(steps=20, delay_seconds=0.5)\n"
    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    start = time.monotonic()
    run = shared.run(code, timeout_seconds=30.0, cancel_event=cancel)
    assert run.error is not None and run.error.kind == "cancelled", run.error
    assert time.monotonic() - start < 4.0
    assert recording.options[0]["cancel_event"] is not None  # the contract's cancel_event reached the call


@pytest.mark.parametrize("sleep", ["import time\ntime.sleep(1000)", "import asyncio\nawait asyncio.sleep(1000)"])
def test_a_sleep_past_the_deadline_ends_the_run_with_timeout(shared: CodeMode, sleep: str) -> None:
    start = time.monotonic()
    run = shared.run(f"{sleep}\n'woke'\n", timeout_seconds=2.0)
    assert run.error is not None and run.error.kind == "timeout", (run.error, run.value)
    assert run.value is None and time.monotonic() - start < 3.0


def test_sleeps_within_the_limit_add_up_against_it(shared: CodeMode) -> None:
    assert shared.run("import time\ntime.sleep(0.2)\n'slept'", timeout_seconds=2.0).value == "slept"
    start = time.monotonic()
    run = shared.run("import time\nfor i in range(10):\n    time.sleep(0.5)\n'slept'", timeout_seconds=2.0)
    assert run.error is not None and run.error.kind == "timeout", (run.error, run.value)
    assert 1.5 < time.monotonic() - start < 3.5


SLOW_CALL = "from tools import sample\nawait sample.count_slowly(steps=10, delay_seconds=0.5)\n"
CAUGHT_SLOW_CALL = """\
from tools import sample
try:
    await sample.count_slowly(steps=10, delay_seconds=0.5)
except RuntimeError as error:
    print("caught", error)
'carried on'
"""


@pytest.mark.parametrize("code", [SLOW_CALL, CAUGHT_SLOW_CALL], ids=["uncaught", "caught"])
def test_a_call_still_running_at_the_deadline_ends_the_run_with_timeout(
    shared: CodeMode, recording: Recording, code: str
) -> None:
    start = time.monotonic()
    run = shared.run(code, timeout_seconds=1.5)
    elapsed = time.monotonic() - start
    assert run.error is not None and run.error.kind == "timeout", (run.error, run.value)
    assert run.value is None and "carried on" not in run.output
    assert elapsed < 3.0, f"the run ended {elapsed:.1f} s after it started"
    options = recording.options[0]
    assert 0 < options["timeout_seconds"] <= 1.5 and options["cancel_event"] is not None
    assert [c.error for c in run.calls] in (["timeout"], ["cancelled"])


# --- the call counter and the host pool -----------------------------------------------------------


LOOP = "from tools import sample\nfor i in range({n}):\n    await sample.get_weather(city='x')\n'done'\n"


def test_max_tool_calls_counts_calls_not_round_trips(shared: CodeMode, recording: Recording) -> None:
    run = shared.run(LOOP.format(n=DEFAULT_MAX_TOOL_CALLS))
    assert run.error is None, run.error
    assert run.value == "done" and len(recording.calls) == DEFAULT_MAX_TOOL_CALLS == len(run.calls)


def test_the_call_past_max_tool_calls_is_not_sent(shared: CodeMode, recording: Recording) -> None:
    run = shared.run(LOOP.format(n=30), max_tool_calls=20)
    assert run.error is not None and run.error.kind == "tool_calls", run.error
    assert "more than 20 tool calls" in run.error.message and "call 21, tools.sample.get_weather" in run.error.message
    assert len(recording.calls) == 20 == len(run.calls)


GATHERED = """\
import asyncio
from tools import sample
done = await asyncio.gather(*[sample.count_slowly(steps=1, delay_seconds=0.2) for _ in range({n})])
len(done)
"""


def test_gathered_calls_share_a_bounded_host_pool(recording: Recording, package: Any) -> None:
    with CodeMode(recording, package=package, max_parallel_calls=4) as mode:
        before = threading.active_count()
        seen: list[int] = []
        stop = threading.Event()

        def count() -> None:
            while not stop.wait(0.02):
                seen.append(threading.active_count())

        watcher = threading.Thread(target=count)
        watcher.start()
        try:
            run = mode.run(GATHERED.format(n=24), timeout_seconds=20.0)
        finally:
            stop.set()
            watcher.join()
    assert run.error is None, run.error
    assert run.value == 24 and len(recording.calls) == 24
    assert recording.most <= 4, f"{recording.most} calls were in flight at once"
    assert recording.most >= 2, "gathered calls were not sent side by side"
    # The pool's threads (4 per concurrent run, started as needed) and the run's watchdog, no more.
    assert max(seen) - before <= 4 * mode.max_concurrent_runs + 3, (before, max(seen))


# --- output and value ------------------------------------------------------------------------------


def test_printed_output_is_cut_with_a_note_and_the_run_goes_on(shared: CodeMode) -> None:
    run = shared.run("for i in range(100):\n    print('x' * 1_000_000)\n'done'", max_output_chars=5_000)
    assert run.error is None, run.error
    assert run.value == "done"
    assert run.output.startswith("x" * 5_000 + "\n[output cut: 99,995,100 more characters")
    assert len(run.output) < 5_300


def test_a_value_over_its_limit_stops_the_run_with_kind_output(shared: CodeMode) -> None:
    run = shared.run("['x' * 1000 for i in range(100)]", max_value_chars=50_000)
    assert run.error is not None and run.error.kind == "output", run.error
    assert "the value is 100,400 characters of JSON, over the 50,000 kept" in run.error.message
    assert run.value is None
    assert shared.run("['x' * 1000 for i in range(40)]", max_value_chars=50_000).error is None


# --- nesting and JSON-only values -------------------------------------------------------------------


DEEP_VALUE = """\
from tools import sample
w = await sample.get_weather(city='Paris')
x = []
for i in range(1000):
    x = [x]
x
"""
DEEP_ARGUMENT = """\
from tools import sample
w = await sample.get_weather(city='Paris')
x = []
for i in range(1000):
    x = [x]
try:
    await sample.search_docs(query='a', filters={'tags': x})
except RuntimeError as error:
    print(error)
'carried on'
"""


def test_a_deeply_nested_value_is_refused_by_kind_and_the_calls_are_kept(
    shared: CodeMode, recording: Recording
) -> None:
    run = shared.run(DEEP_VALUE)
    assert run.error is not None and run.error.kind == "value", run.error
    assert f"nest deeper than {MAX_NESTING} levels" in run.error.message
    assert [c.wire_name for c in run.calls] == ["get_weather"]


def test_a_deeply_nested_argument_is_refused_before_it_is_sent(shared: CodeMode, recording: Recording) -> None:
    run = shared.run(DEEP_ARGUMENT)
    assert run.error is None, run.error
    assert run.value == "carried on"
    assert run.output.startswith("invalid_arguments: search_docs() was not called: the lists and dicts in")
    assert [name for name, _ in recording.calls] == ["get_weather"]
    assert [c.wire_name for c in run.calls] == ["get_weather"]


@pytest.mark.parametrize(
    ("code", "fragment"),
    [("float('nan')", "nan, which JSON cannot carry"), ("b'abc'", "bytes"), ("{1: 'a'}", "the key 1")],
)
def test_a_value_that_is_not_json_is_refused_not_changed(shared: CodeMode, code: str, fragment: str) -> None:
    run = shared.run(code)
    assert run.error is not None and run.error.kind == "value", (run.error, run.value)
    assert fragment in run.error.message


@pytest.mark.parametrize("argument", ["float('nan')", "float('inf')"])
def test_an_argument_that_is_not_json_is_refused_not_sent(
    shared: CodeMode, recording: Recording, argument: str
) -> None:
    code = (
        "from tools import sample\ntry:\n    await sample.count_slowly(steps=1, delay_seconds="
        f"{argument})\nexcept RuntimeError as error:\n    print(error)\n"
    )
    run = shared.run(code)
    assert run.error is None, run.error
    assert run.output.startswith("invalid_arguments: count_slowly() was not called: the arguments['delay_seconds']")
    assert recording.calls == [] and run.calls == []
