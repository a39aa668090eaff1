"""``toolgen diff --impact``: exactly the call sites of a user's code a server change breaks.

A small project locks the real sample server (stdio) and generates its package; its agent code
calls the tools. The server then lists with ``--drift upgrade``: a tool removed (``whoami``), a new
required argument (``notes.create``'s ``folder``), a narrowed enum (``get_weather``'s ``units``),
an output key renamed (``flaky_lookup``'s ``value`` -> ``result``), a description rewritten
(``notes.delete``) and a parameter deprecated (``search-docs``'s ``limit``). Real mypy and real
pyright must name the broken lines, each with its tool and drift rule, and nothing else; with
only a description rewritten, nothing breaks and the exit code is 0.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from gen_helpers import forked_python, generate

import codegen.impact
from codegen.cli import main as toolgen_main
from codegen.drift import Change
from codegen.impact import Diagnostic, attribute, detect_checker, new_diagnostics, tool_names

AGENT = """\
from sample_tools import Tools


def run(tools: Tools) -> None:
    tools.sample.get_weather(city="Paris", units="fahrenheit")
    tools.sample.get_weather(city="Paris", units="celsius")
    tools.sample.notes_create(title="t", body="b")
    tools.sample.whoami()
    print(tools.sample.flaky_lookup(key="k").value)
    looked = tools.sample.flaky_lookup(key="k")
    print(looked.attempt, looked.value)
    tools.sample.notes_delete(id="x")
    tools.sample.search_docs(query="q", limit=3)
    tools.sample.count_slowly(steps=2)
"""
# (line, tool, rule) of every call site the upgrade breaks, in order.
BROKEN = [
    (5, "sample/get_weather", "enum-value-removed"),
    (7, "sample/notes.create", "param-added-required"),
    (8, "sample/whoami", "tool-removed"),
    (9, "sample/flaky_lookup", "output-field-removed"),
    (11, "sample/flaky_lookup", "output-field-removed"),
]


def _infra(path: Path, *flags: str) -> None:
    server = forked_python("-m", "mas.samples.mcp_server", *flags)
    path.write_text(
        "kind: ToolServerRegistry\nspec:\n  servers:\n"
        "    - name: sample\n      protocol: mcp\n      transport: stdio\n"
        + "".join(f"      {key}: {json.dumps(value)}\n" for key, value in server.items())
        + "      connect_timeout_seconds: 20\n",
        encoding="utf-8",
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("impact")
    # Every impact run of this module keeps its mypy cache in one folder instead of a new one each:
    # the checker still runs for real over both packages (mypy checks each cached module against
    # its source), but the standard library and pydantic are analysed once per module, not twice
    # per test: this file went from 60 to 45 CPU-s (docs/tests.md).
    cache = tmp_path_factory.mktemp("impact-mypy-cache")
    checker = codegen.impact.run_checker

    def run_checker(name: str, command: Sequence[str], work: Path, paths: Sequence[str], _: Path) -> list[Diagnostic]:
        return checker(name, command, work, paths, cache)

    mp = pytest.MonkeyPatch()
    mp.setattr(codegen.impact, "run_checker", run_checker)
    _infra(root / "sample.yaml")
    _infra(root / "upgrade.yaml", "--drift", "upgrade")
    _infra(root / "described.yaml", "--drift", "description-rewritten")
    (root / "pyproject.toml").write_text(
        '[tool.toolgen]\ninfra = ["sample.yaml"]\nout = "gen"\npackage = "sample_tools"\n', encoding="utf-8"
    )
    try:
        assert generate(root, []) == 0
        (root / "agent").mkdir()
        (root / "agent" / "agent.py").write_text(AGENT, encoding="utf-8")
        yield root
    finally:
        mp.undo()


def _impact(
    root: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    monkeypatch.chdir(root)
    code = toolgen_main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _found(out: str) -> list[tuple[int, str, str]]:
    found = []
    for line in out.splitlines():
        if line.startswith("agent/agent.py:"):
            where, tool_part = line.split(": ", 2)[:2]
            tool, rule = tool_part.removeprefix("tool ").split(" (")
            found.append((int(where.split(":")[1]), tool, rule.split(",")[0]))
    return found


@pytest.mark.parametrize("checker", ["mypy", pytest.param("pyright", marks=pytest.mark.full)])
def test_impact_lists_exactly_the_broken_call_sites(
    checker: str, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {p: p.read_bytes() for p in [project / "toolgen.lock.json", *(project / "gen").rglob("*.py")]}
    argv = ["diff", "--impact", "agent", "--infra", "upgrade.yaml", "--checker", checker]
    code, out, err = _impact(project, argv, monkeypatch, capsys)
    assert code == 3, (out, err)
    assert _found(out) == BROKEN, out
    assert out.splitlines()[-1].startswith(f"toolgen: 5 call site(s) break ({checker}); the servers: ")
    # The project's lock and package are as they were: the new package was built elsewhere.
    assert {p: p.read_bytes() for p in before} == before


@pytest.mark.full  # test_impact_lists_exactly_the_broken_call_sites runs the same comparison in the fast tier
def test_a_change_that_breaks_no_call_site_exits_0(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _impact(project, ["diff", "--impact", "agent", "--infra", "described.yaml"], monkeypatch, capsys)
    assert code == 0, out
    assert out.splitlines() == [
        "toolgen: no call site breaks (mypy); the servers: 1 change(s): 0 breaking, 1 review, 0 compatible"
    ]


@pytest.mark.full
def test_generate_check_reports_the_impact_when_asked(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["generate", "--check", "--infra", "upgrade.yaml", "--impact", "agent/agent.py", "--checker", "mypy"]
    code, out, _ = _impact(project, argv, monkeypatch, capsys)
    assert code == 3
    assert "is stale" in out and _found(out) == BROKEN


def test_bad_input_is_one_line(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = _impact(project, ["diff", "--impact", "agent", "missing.py"], monkeypatch, capsys)
    assert code == 2 and err.splitlines() == ["toolgen: error: --impact: missing.py: no such file or folder"]
    # A checker that is not installed: no pyright on PATH, none beside the interpreter.
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr("sys.executable", str(tmp_path / "python"))
    code, _, err = _impact(project, ["diff", "--impact", "agent", "--checker", "pyright"], monkeypatch, capsys)
    assert code == 2 and err.splitlines() == [
        "toolgen: error: --checker: pyright is not installed; install it with `pip install pyright`"
    ]
    code, _, err = _impact(project, ["generate", "--impact", "agent"], monkeypatch, capsys)
    assert code == 2 and err.splitlines() == [
        "toolgen: error: --impact goes with --check (or use `toolgen diff --impact`)"
    ]


def test_the_checker_is_the_one_the_project_configures(tmp_path: Path) -> None:
    assert detect_checker(tmp_path) == "mypy"
    (tmp_path / "pyrightconfig.json").write_text("{}")
    assert detect_checker(tmp_path) == "pyright"
    (tmp_path / "pyproject.toml").write_text("[tool.mypy]\nstrict = true\n")
    assert detect_checker(tmp_path) == "mypy"
    (tmp_path / "pyproject.toml").write_text("[tool.pyright]\n[tool.mypy]\n")
    assert detect_checker(tmp_path) == "pyright"


def test_only_new_diagnostics_count_each_as_often_as_it_appears() -> None:
    a = Diagnostic("a.py", 3, 1, "x", "m")
    b = Diagnostic("a.py", 4, 1, "x", "m")
    assert new_diagnostics([a], [a, a, b]) == [a, b]
    assert new_diagnostics([a, b], [b]) == []


def test_the_rule_is_the_change_the_message_names(project: Path) -> None:
    tools = tool_names(project / "gen" / "sample_tools")
    units = Change("sample", "get_weather", "breaking", "enum-value-removed", "/inputSchema/properties/units/enum",
                   "fahrenheit", None, "parameter 'units': enum value \"fahrenheit\" removed")  # fmt: skip
    text = Change("sample", "get_weather", "review", "description-changed", "/description", "a", "b", "changed")
    other = Change("sample", "greet", "breaking", "tool-removed", "", "greet", None, "tool removed")
    line = '    tools.sample.get_weather(city="Paris", units="fahrenheit")'
    message = 'Argument "units" to "get_weather" of "SampleTools" has incompatible type'
    assert attribute(Diagnostic("a.py", 1, 1, "", message), line, [text, other, units], tools) == units
    assert attribute(Diagnostic("a.py", 1, 1, "", "something"), line, [text, other], tools) == text
    assert attribute(Diagnostic("a.py", 1, 1, "", "something"), "x = 1", [text, other, units], tools) is None


@pytest.mark.full  # the fast tier compares a lock with live servers; this, two saved listings
def test_two_saved_listings_are_compared_the_same_way(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``toolgen diff OLD NEW --impact``: both packages from saved tools/list results (how CI
    compares a listing it saved with a new one, and how the benchmark measures the cost)."""
    from mas.samples.mcp_server import apply_drift, tool_definitions

    for name, drift in (("old", None), ("new", "upgrade")):
        tools = [t.model_dump(by_alias=True, exclude_none=True) for t in apply_drift(tool_definitions(), drift)]
        (project / f"{name}.json").write_text(json.dumps({"tools": tools}), encoding="utf-8")
    argv = ["diff", "old.json", "new.json", "--server", "sample", "--impact", "agent", "--checker", "mypy"]
    code, out, err = _impact(project, argv, monkeypatch, capsys)
    assert code == 3, (out, err)
    assert _found(out) == BROKEN, out
    code, _, err = _impact(project, ["diff", "toolgen.lock.json", "new.json", "--impact", "agent"], monkeypatch, capsys)
    assert code == 2 and err.splitlines() == [
        "toolgen: error: toolgen.lock.json: --impact with OLD NEW takes two locks or two saved tools/list results, "
        "not one of each"
    ]


@pytest.mark.full  # the fast tier compares a lock with live servers; this, two locks
@pytest.mark.timeout(600)  # two offline generations and two checker runs each, on a shared machine
@pytest.mark.parametrize("checker", ["mypy", "pyright"])
def test_two_locks_build_both_packages_and_list_the_same_call_sites(
    checker: str, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``toolgen diff OLD.lock NEW.lock --impact``: each package is generated offline from its lock with
    the project's settings (how CI compares the lock of the main branch with a pull request's)."""
    new_lock = project / "upgraded.lock.json"
    if not new_lock.is_file():  # the project's lock, then the upgraded server listed live into a copy
        new_lock.write_bytes((project / "toolgen.lock.json").read_bytes())
        argv = ["--infra", "upgrade.yaml", "--lock", new_lock.name, "--out", "upgraded-gen"]
        assert generate(project, argv, monkeypatch) == 0
    before = {p: p.read_bytes() for p in [project / "toolgen.lock.json", new_lock, *(project / "gen").rglob("*.py")]}
    argv = ["diff", "toolgen.lock.json", new_lock.name, "--impact", "agent", "--checker", checker]
    code, out, err = _impact(project, argv, monkeypatch, capsys)
    assert code == 3, (out, err)
    assert _found(out) == BROKEN, out
    assert {p: p.read_bytes() for p in before} == before
    if checker == "pyright":
        return
    # The same lock twice: nothing changes, nothing breaks.
    argv = ["diff", new_lock.name, new_lock.name, "--impact", "agent", "--checker", checker]
    code, out, _ = _impact(project, argv, monkeypatch, capsys)
    assert (code, out.splitlines()) == (0, [f"toolgen: no call site breaks ({checker}); the servers: no change"])
