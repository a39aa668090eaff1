"""The official MCP client conformance suite against toolgen's runtime, one scenario per test.

Each test runs ``conformance client --scenario NAME --command "<python> client.py"``: the suite
starts its test server, runs tests/conformance/client.py (the runtime's public API only) with
the server's URL and gives its own verdict, exit status 0 when every check passed. The scenario
list is the suite's own (``conformance list --client``), so a new scenario in a new pin becomes a
new test. The suite and Node 22 are installed from the npm registry into a user cache, once
(conformance_suite.py). docs/conformance.md says what each scenario proves.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from conformance_suite import SCENARIOS, Suite, client_scenarios, installed, unavailable
from prefork import python_command
from tiers import full_tier

CLIENT = Path(__file__).resolve().parent / "client.py"
#: The suite's own time limit for one client run (its default, 30 s), and ours for the whole scenario.
CLIENT_TIMEOUT_MS = 30_000
SCENARIO_TIMEOUT = 90

#: Scenarios known not to pass yet, with the reason (none today); strict, so one that starts
#: passing fails here and its entry must go.
EXPECTED_FAILURES: dict[str, str] = {}

#: The fast tier's part of the suite (docs/tests.md, "Two tiers"): the handshake, a tool call, an
#: elicitation, a stream resumed after a cut, and two sign-ins (discovery and a step-up of scope).
#: The full tier runs every scenario.
FAST = frozenset(
    {"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry", "auth/metadata-default",
     "auth/scope-step-up"}
)  # fmt: skip


def _expected_failure(scenario: str) -> str | None:
    return EXPECTED_FAILURES.get(scenario)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "scenario" not in metafunc.fixturenames:
        return
    params = []
    for name in SCENARIOS:
        why = _expected_failure(name)
        marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        if name not in FAST:
            marks.append(pytest.mark.full)
        params.append(pytest.param(name, marks=marks, id=name))
    metafunc.parametrize("scenario", params)


def _client_command(tmp_path: Path) -> str:
    # The suite splits --command on single spaces and runs it through a shell: a wrapper script
    # in a space-free folder keeps any interpreter or checkout path intact.
    # The client is a fork of a pre-imported interpreter (tests/prefork.py): a real process the
    # suite starts and judges, without paying ``import mcp`` in each of the ~26 scenarios.
    wrapper = tmp_path / "client.sh"
    command = " ".join(shlex.quote(arg) for arg in python_command(str(CLIENT), pythonpath=None))
    wrapper.write_text(f'#!/bin/sh\nexec {command} "$@"\n')
    wrapper.chmod(0o755)
    if any(ch.isspace() for ch in str(wrapper)):
        pytest.fail(f"the suite cannot run a command from a path with spaces: {wrapper}")
    return str(wrapper)


#: Scenarios run side by side: each spends most of its time waiting on its own test server (which
#: listens on a free port) and the client's round trips, so a few at once share the cores well.
CONCURRENT = 3
Verdicts = Mapping[str, Future[subprocess.CompletedProcess[str]]]


def _run_scenario(suite: Suite, scenario: str, work: Path) -> subprocess.CompletedProcess[str]:
    command = suite.command(
        "client", "--scenario", scenario, "--command", _client_command(work),
        "--timeout", str(CLIENT_TIMEOUT_MS), "--output-dir", str(work / "results"),
    )  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=SCENARIO_TIMEOUT, check=False)


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator[Verdicts]:
    """Every scenario of this tier started at once (:data:`CONCURRENT` at a time), in a folder of its
    own; each test then waits for its own verdict, so one scenario's failure is still one test's
    failure."""
    reason = unavailable()
    if reason is not None:
        pytest.skip(f"conformance suite not installed: {reason}")
    suite = installed()
    pool = ThreadPoolExecutor(max_workers=CONCURRENT, thread_name_prefix="conformance")
    full = full_tier(pytestconfig)
    runs = {
        name: pool.submit(_run_scenario, suite, name, tmp_path_factory.mktemp("scenario"))
        for name in SCENARIOS
        if full or name in FAST
    }
    yield runs
    pool.shutdown(cancel_futures=True)


@pytest.mark.slow
def test_client_scenario(scenario: str, verdicts: Verdicts) -> None:
    """The suite's verdict on one scenario: exit status 0 (every check SUCCESS, no warning)."""
    # Bounded: each run is bounded by SCENARIO_TIMEOUT, and at most all of them wait before it.
    done = verdicts[scenario].result(timeout=SCENARIO_TIMEOUT * len(verdicts))
    if done.returncode != 0:
        report = "\n".join((done.stdout + done.stderr).strip().splitlines()[-40:])
        pytest.fail(f"conformance scenario {scenario!r} failed (exit {done.returncode}):\n{report}", pytrace=False)


def test_the_fast_tiers_scenarios_are_in_the_suite() -> None:
    """A fast-tier name that is no scenario (a typo, one the suite renamed) must not vanish from
    the run unnoticed; the next test holds SCENARIOS to the suite's own list."""
    assert FAST <= set(SCENARIOS), sorted(FAST - set(SCENARIOS))


def test_the_written_scenario_list_is_the_suites_own() -> None:
    """SCENARIOS is what the pinned suite lists: one it adds would go untested, one it drops fail."""
    if unavailable() is not None:
        pytest.skip("conformance suite not installed")
    assert client_scenarios() == SCENARIOS
