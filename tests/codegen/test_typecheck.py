"""Generated packages pass real ``mypy --strict`` and real pyright (strict), and so does correct user code.

One package is generated from all six tools/list captures together (namespaced: ``tools.time...``)
and one from the sample ``kind: Tool`` YAML. Each checker runs once over both packages plus four user
scripts from ``cases/typecheck/``: two correct ones (no diagnostic allowed) and two with deliberate
mistakes, whose diagnostics (line, rule, a fragment of the message) are compared in full with the
snapshots below, like mypy_boto3_builder's typing snapshots. A mistake that stops being reported,
or a new diagnostic anywhere, fails the test.

Stable call sites, in the same runs: packages ``one`` (the time capture) and ``two`` (time and
fetch) with agent code that differs only in the package it imports, and uses ``RuntimeRegistry``
too. The workspace is a temporary folder outside the repository, so ``mas`` is seen only as
installed: without its ``py.typed`` the agent scripts fail with ``import-untyped``.
"""

from __future__ import annotations

import importlib.resources
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from gen_helpers import checked_modules, forked_python, mypy_strict, runtime_copy
from pyright_batch import Batch, pyright_workspace

from codegen.cli import main as toolgen

pytestmark = pytest.mark.slow  # one mypy and one pyright run over many packages and scripts

REPO = Path(__file__).resolve().parents[2]
CAPTURES_DIR = REPO / "tests" / "fixtures" / "mcp-tools-list"
CAPTURES = sorted(CAPTURES_DIR.glob("*.json"))
SAMPLE_TOOLS = REPO / "library-samples" / "tools"
SCRIPTS = Path(__file__).resolve().parent / "cases" / "typecheck"
PACKAGES = ("captures", "samples", "one", "two", "upgraded")
GOOD_SCRIPTS = ("good_captures.py", "good_samples.py", "agent_one.py", "agent_two.py", "good_testing.py")
SCRIPT_NAMES = (*GOOD_SCRIPTS, "bad_captures.py", "bad_samples.py", "bad_testing.py", "bad_upgraded.py")
DEPRECATIONS = REPO / "tests" / "fixtures" / "upgrades" / "deprecations.json"

# (line, rule, fragment of the message) for every error, sorted. Lines refer to the scripts in
# cases/typecheck/; the comment at the end of each line there names the mistake.
MYPY_BAD_CAPTURES = [
    (21, "arg-type", 'Argument "timezone" to "get_current_time" of "TimeTools" has incompatible type "int"'),
    (22, "call-arg", 'Unexpected keyword argument "tz" for "get_current_time"'),
    (23, "call-arg", 'Missing named argument "target_timezone" for "convert_time"'),
    (24, "call-arg", 'Too many positional arguments for "get_current_time"'),
    (25, "typeddict-item", 'Missing key "oldText" for TypedDict "FilesystemEditFileInputEdit"'),
    (25, "typeddict-unknown-key", 'Extra key "old_text" for TypedDict "FilesystemEditFileInputEdit"'),
    (26, "arg-type", "\"Literal['warning']\"; expected \"Literal['error', 'success', 'debug']\""),
    (27, "assignment", 'expression has type "TimeGetCurrentTimeOutput", variable has type "str"'),
    (28, "assignment", 'expression has type "bool", variable has type "str"'),
    (29, "attr-defined", '"TimeGetCurrentTimeOutput" has no attribute "is_dts"'),
    (30, "attr-defined", '"ToolOutput" has no attribute "value"'),
    (31, "call-arg", 'Unexpected keyword argument "timeout" for "with_options"'),
    (37, "assignment", 'expression has type "Coroutine[Any, Any, TimeGetCurrentTimeOutput]"'),
    (47, "arg-type", 'Argument 1 to "Tools" has incompatible type "AsyncProvider"; expected "SupportsCallTool"'),
    (48, "typeddict-unknown-key", 'Extra key "timeout" for TypedDict "CallOptions"'),
    (49, "arg-type", 'Argument 2 to "Tools" has incompatible type "dict[str, str]"; expected "CallOptions | None"'),
    (
        55,
        "arg-type",
        'Argument "dry_run" to "edit_file" of "FilesystemTools" has incompatible type "None"; '
        'expected "bool | NotGiven"',
    ),  # fmt: skip
]
MYPY_BAD_SAMPLES = [
    (
        17,
        "arg-type",
        'Argument "value" to "unit_convert" of "SkillsTools" has incompatible type "str"; expected "float"',
    ),
    (18, "arg-type", '"unit_convert" of "SkillsTools" has incompatible type "Literal[\'parsec\']"'),
    (19, "call-arg", 'Missing named argument "to_unit" for "unit_convert"'),
    (20, "call-arg", 'Unexpected keyword argument "limit" for "web_search"'),
    (21, "arg-type", 'to "current_time" of "SkillsTools" has incompatible type "None"; expected "str | NotGiven"'),
    (22, "assignment", 'expression has type "list[SkillsWebSearchOutputResult]", variable has type "int"'),
]
PYRIGHT_BAD_CAPTURES = [
    (21, "reportArgumentType", 'cannot be assigned to parameter "timezone" of type "str"'),
    (22, "reportCallIssue", 'No parameter named "tz"'),
    (23, "reportCallIssue", 'Argument missing for parameter "target_timezone"'),
    (24, "reportCallIssue", "Expected 0 positional arguments"),
    (25, "reportArgumentType", '"old_text" is an undefined item in type "FilesystemEditFileInputEdit"'),
    (26, "reportArgumentType", '"Literal[\'warning\']" cannot be assigned to parameter "message_type"'),
    (27, "reportAssignmentType", '"TimeGetCurrentTimeOutput" is not assignable to declared type "str"'),
    (28, "reportAssignmentType", '"bool" is not assignable to declared type "str"'),
    (29, "reportUnknownMemberType", 'Type of "is_dts" is unknown'),
    (29, "reportUnknownArgumentType", "Argument type is unknown"),
    (29, "reportAttributeAccessIssue", 'Cannot access attribute "is_dts" for class "TimeGetCurrentTimeOutput"'),
    (30, "reportUnknownMemberType", 'Type of "value" is unknown'),
    (30, "reportUnknownArgumentType", "Argument type is unknown"),
    (30, "reportAttributeAccessIssue", 'Cannot access attribute "value" for class "ToolOutput"'),
    (31, "reportCallIssue", 'No parameter named "timeout"'),
    (
        37,
        "reportAssignmentType",
        'Any, TimeGetCurrentTimeOutput]" is not assignable to declared type "TimeGetCurrentTimeOutput"',
    ),
    (47, "reportArgumentType", '"AsyncProvider" cannot be assigned to parameter "provider" of type "SupportsCallTool"'),
    (48, "reportAssignmentType", 'Type "dict[str, float]" is not assignable to declared type "CallOptions"'),
    (49, "reportArgumentType", 'cannot be assigned to parameter "options" of type "CallOptions | None"'),
    (55, "reportArgumentType", '"None" cannot be assigned to parameter "dry_run" of type "bool | NotGiven"'),
]
PYRIGHT_BAD_SAMPLES = [
    (17, "reportArgumentType", 'cannot be assigned to parameter "value" of type "float"'),
    (18, "reportArgumentType", '"Literal[\'parsec\']" cannot be assigned to parameter "from_unit"'),
    (19, "reportCallIssue", 'Argument missing for parameter "to_unit"'),
    (20, "reportCallIssue", 'No parameter named "limit"'),
    (21, "reportArgumentType", '"None" cannot be assigned to parameter "timezone" of type "str | NotGiven"'),
    (22, "reportAssignmentType", '"list[SkillsWebSearchOutputResult]" is not assignable to declared type "int"'),
]
# The test kit (captures.testing): a wrong .returns type, an .answers fn over another tool's
# arguments, a tool that is not in the package.
MYPY_BAD_TESTING = [
    (16, "arg-type", 'Argument 1 to "returns" of "ToolHandle" has incompatible type "str"; expected "TimeGetCurrent'),
    (17, "arg-type", 'has incompatible type "Callable[[TimeConvertTimeInput], TimeGetCurrentTimeOutput]"; expected '
                     '"Callable[[TimeGetCurrentTimeInput], TimeGetCurrentTimeOutput]"'),
    (18, "attr-defined", '"_TimeFakes" has no attribute "get_current_tme"'),
]  # fmt: skip
PYRIGHT_BAD_TESTING = [
    (16, "reportArgumentType", 'parameter "value" of type "TimeGetCurrentTimeOutput" in function "returns"'),
    (17, "reportArgumentType", 'parameter "fn" of type "(TimeGetCurrentTimeInput) -> TimeGetCurrentTimeOutput"'),
    (18, "reportUnknownMemberType", 'Type of "get_current_tme" is unknown'),
    (18, "reportUnknownMemberType", 'Type of "returns" is unknown'),
    (18, "reportAttributeAccessIssue", 'Cannot access attribute "get_current_tme" for class "_TimeFakes"'),
]

# PEP 702 deprecations (package ``upgraded``): a deprecated tool, a deprecated optional parameter
# (its overload), the kept removed tool; mypy runs with ``--enable-error-code deprecated``, pyright's
# strict mode reports ``reportDeprecated`` as an error.
_OLD_LOOKUP = "tool 'old_lookup' is deprecated by its server"
_LIMIT = "parameter 'limit' of tool 'search' is deprecated by its server"
_WHOAMI = "tool 'whoami' was removed by its server in version 1.0.0 of this package"
_DOCS_LIMIT = "parameter 'limit' of tool 'search-docs' is deprecated by its server"
DEPRECATED = [(14, _LIMIT), (15, _OLD_LOOKUP), (16, _OLD_LOOKUP), (17, _LIMIT), (19, _DOCS_LIMIT), (20, _WHOAMI),
              (24, _WHOAMI), (25, _OLD_LOOKUP)]  # fmt: skip
MYPY_BAD_UPGRADED = [(line, "deprecated", f"is deprecated: {why}") for line, why in DEPRECATED]
PYRIGHT_BAD_UPGRADED = [(line, "reportDeprecated", why) for line, why in DEPRECATED]

_MYPY_LINE = re.compile(
    r"^(?P<file>[^:]+):(?P<line>\d+): (?P<severity>error|note): (?P<message>.*?)(?:  \[(?P<code>[a-z-]+)\])?$"
)


@dataclass(frozen=True)
class Diagnostic:
    file: str  # path relative to the workspace, "/"-separated
    line: int
    rule: str
    message: str


@dataclass(frozen=True)
class Report:
    diagnostics: tuple[Diagnostic, ...]
    output: str  # the checker's raw output, for failure messages

    def of(self, file: str) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.file == file]

    def under(self, package: str) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.file.startswith(package + "/")]


def _generate(out: Path, package: str, sources: list[str]) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(out)  # no pyproject.toml above a temporary folder: only the flags below count
        assert toolgen(["generate", "--out", str(out), "--package", package, *sources]) == 0


def _upgraded(root: Path) -> None:
    """Package ``upgraded``: the real sample server, then the same server with ``--drift upgrade``
    (``whoami`` removed and kept, ``search-docs``'s ``limit`` deprecated), beside the deprecations
    fixture; its project folder (lock, settings) sits apart, so the workspace has no pyproject.toml."""
    project = root / "upgraded-project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.toolgen]\nkeep_removed_tools = 1\n", encoding="utf-8")
    for drift in ([], ["--drift", "upgrade"]):
        server = forked_python("-m", "mas.samples.mcp_server", *drift)
        entry = "".join(f"      {key}: {json.dumps(value)}\n" for key, value in server.items())
        (project / "infra.yaml").write_text(
            "kind: ToolServerRegistry\nspec:\n  servers:\n    - name: sample\n      protocol: mcp\n"
            f"      transport: stdio\n{entry}      connect_timeout_seconds: 20\n",
            encoding="utf-8",
        )
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(project)
            argv = ["--infra", "infra.yaml", "--lock", "lock.json", "--mcp-json", f"idx={DEPRECATIONS}"]
            assert toolgen(["generate", "--out", str(root), "--package", "upgraded", *argv]) == 0


def _not_checked(path: Path) -> bool:
    """The runtime copies are checked in the first package, as they sit in a generated package; the
    other packages' copies are the same bytes (test_golden.py), read by pyright but not checked again."""
    return path.parts[0] != PACKAGES[0] and runtime_copy(path)


@pyright_workspace(include=[*PACKAGES, *SCRIPT_NAMES], exclude=_not_checked)
def checked(root: Path) -> None:
    _generate(root, "captures", [arg for path in CAPTURES for arg in ("--mcp-json", str(path))])
    _generate(root, "samples", ["--tools", str(SAMPLE_TOOLS)])
    time_json, fetch_json = (str(CAPTURES_DIR / f"{name}.json") for name in ("time", "fetch"))
    _generate(root, "one", ["--mcp-json", time_json])
    _generate(root, "two", ["--mcp-json", time_json, "--mcp-json", fetch_json])
    _upgraded(root)
    for name in SCRIPT_NAMES:
        shutil.copyfile(SCRIPTS / name, root / name)


@pytest.fixture(scope="module")
def workspace(pyright_batch: Batch) -> Path:
    return pyright_batch.built(checked)[0]


@pytest.fixture(scope="module")
def mypy_report(workspace: Path) -> Report:
    completed = mypy_strict(workspace, *PACKAGES, *SCRIPT_NAMES)
    output = completed.stdout + completed.stderr
    assert completed.returncode == 1, output  # 1: type errors found (the bad scripts); 2 would be a crash
    diagnostics = []
    for line in completed.stdout.splitlines():
        match = _MYPY_LINE.match(line)
        assert match is not None, f"unparsed mypy output line: {line!r}"
        if match["severity"] == "error":
            file = match["file"].replace("\\", "/")
            diagnostics.append(Diagnostic(file, int(match["line"]), match["code"] or "", match["message"]))
    return Report(tuple(diagnostics), output)


@pytest.fixture(scope="module")
def pyright_report(workspace: Path, pyright_batch: Batch) -> Report:
    report = pyright_batch.report(checked)
    # Every package module (the output models: one per tool; the code-mode stubs) and every script was checked.
    first, *others = PACKAGES
    modules = checked_modules(workspace, others) + len(
        [*(workspace / first).rglob("*.py"), *(workspace / first).rglob("*.pyi")]
    )
    assert len(report["checked"]) == modules + len(SCRIPT_NAMES), report["checked"]
    diagnostics = [
        Diagnostic(
            Path(d["file"]).resolve().relative_to(workspace.resolve()).as_posix(),
            d["range"]["start"]["line"] + 1,
            d.get("rule", ""),
            d["message"],
        )
        for d in report["generalDiagnostics"]
        if d["severity"] in ("error", "warning")
    ]
    # Failure messages show the diagnostics one per line, not pyright's whole JSON report.
    summary = "\n".join(f"{d.file}:{d.line}: {d.rule}: {d.message.splitlines()[0]}" for d in diagnostics)
    return Report(tuple(diagnostics), summary)


def _snapshot(diagnostics: list[Diagnostic], expected: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    """The diagnostics in snapshot form, sorted: the message becomes the expected fragment when it contains it."""
    fragments = {(line, rule): fragment for line, rule, fragment in expected}
    out = []
    for d in diagnostics:
        fragment = fragments.get((d.line, d.rule))
        out.append((d.line, d.rule, fragment if fragment is not None and fragment in d.message else d.message))
    return sorted(out)


# --- the generated packages -----------------------------------------------------------------------


def test_packages_are_generated(workspace: Path) -> None:
    for package in PACKAGES:
        names = sorted(p.name for p in (workspace / package).iterdir() if p.name != "__pycache__")
        assert names == [
            "CHANGELOG.md", "__init__.py", "_rules.py", "_runtime", "_testing_data.py", "_tools.py", "_version.py",
            "api.md", "code_mode", "inputs.py", "outputs", "py.typed", "testing.py",
        ]  # fmt: skip
    tools = (workspace / "captures" / "_tools.py").read_text(encoding="utf-8")
    for attr, cls in [("everything", "Everything"), ("fetch", "Fetch"), ("filesystem", "Filesystem"),
                      ("git", "Git"), ("memory", "Memory"), ("time", "Time")]:  # fmt: skip
        assert f"        self.{attr} = {cls}Tools(provider, options)\n" in tools


@pytest.mark.parametrize("package", PACKAGES)
def test_mypy_strict_package_has_no_errors(mypy_report: Report, package: str) -> None:
    assert mypy_report.under(package) == [], mypy_report.output


@pytest.mark.parametrize("package", PACKAGES)
def test_pyright_strict_package_has_no_errors(pyright_report: Report, package: str) -> None:
    assert pyright_report.under(package) == [], pyright_report.output


@pytest.mark.parametrize("script", GOOD_SCRIPTS)
def test_mypy_strict_accepts_correct_code(mypy_report: Report, script: str) -> None:
    assert mypy_report.of(script) == [], mypy_report.output


@pytest.mark.parametrize("script", GOOD_SCRIPTS)
def test_pyright_strict_accepts_correct_code(pyright_report: Report, script: str) -> None:
    assert pyright_report.of(script) == [], pyright_report.output


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("bad_captures.py", MYPY_BAD_CAPTURES),
        ("bad_samples.py", MYPY_BAD_SAMPLES),
        ("bad_testing.py", MYPY_BAD_TESTING),
        ("bad_upgraded.py", MYPY_BAD_UPGRADED),
    ],
)
def test_mypy_strict_reports_each_mistake(
    mypy_report: Report, script: str, expected: list[tuple[int, str, str]]
) -> None:
    assert _snapshot(mypy_report.of(script), expected) == sorted(expected), mypy_report.output


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("bad_captures.py", PYRIGHT_BAD_CAPTURES),
        ("bad_samples.py", PYRIGHT_BAD_SAMPLES),
        ("bad_testing.py", PYRIGHT_BAD_TESTING),
        ("bad_upgraded.py", PYRIGHT_BAD_UPGRADED),
    ],
)
def test_pyright_strict_reports_each_mistake(
    pyright_report: Report, script: str, expected: list[tuple[int, str, str]]
) -> None:
    assert _snapshot(pyright_report.of(script), expected) == sorted(expected), pyright_report.output


def test_every_marked_mistake_is_in_the_snapshots() -> None:
    """Each line of a bad script that ends in a ``# comment`` naming a mistake has a snapshot entry."""
    for script, snapshots in [("bad_captures.py", (MYPY_BAD_CAPTURES, PYRIGHT_BAD_CAPTURES)),
                              ("bad_samples.py", (MYPY_BAD_SAMPLES, PYRIGHT_BAD_SAMPLES)),
                              ("bad_testing.py", (MYPY_BAD_TESTING, PYRIGHT_BAD_TESTING)),
                              ("bad_upgraded.py", (MYPY_BAD_UPGRADED, PYRIGHT_BAD_UPGRADED))]:  # fmt: skip
        lines = (SCRIPTS / script).read_text(encoding="utf-8").splitlines()
        marked = {n for n, text in enumerate(lines, start=1) if "  # " in text}
        for snapshot in snapshots:
            assert {line for line, _, _ in snapshot} == marked, script


# --- stable call sites and installed typing -------------------------------------------------------


@pytest.mark.parametrize("package", ["mas", "codegen"])
def test_installed_packages_carry_py_typed(package: str) -> None:
    assert importlib.resources.files(package).joinpath("py.typed").is_file()


def test_agent_scripts_differ_only_in_the_package_they_import() -> None:
    one = (SCRIPTS / "agent_one.py").read_text(encoding="utf-8").replace("``one`` (the time capture alone)", "")
    two = (SCRIPTS / "agent_two.py").read_text(encoding="utf-8").replace("``two`` (the time and fetch captures)", "")
    assert one.replace("from one import", "from two import") == two


def test_a_second_source_leaves_the_first_sources_classes_alone(workspace: Path) -> None:
    one = (workspace / "one" / "_tools.py").read_text(encoding="utf-8")
    two = (workspace / "two" / "_tools.py").read_text(encoding="utf-8")
    assert "self.time = TimeTools(" in one and "self.fetch" not in one
    assert "self.time = TimeTools(" in two and "self.fetch = FetchTools(" in two
    for cls in ("TimeTools", "TimeToolsResults", "AsyncTimeTools", "AsyncTimeToolsResults"):
        start = one.index(f"\nclass {cls}(")
        assert one[start : one.index("\nclass ", start + 1)] in two, cls
