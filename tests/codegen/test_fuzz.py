"""Property-based fuzzing: random tools/list results (tests/fuzz_strategies.py) through ``generate``.

For every example ``generate`` exits 0 (any warnings one line each) or 2 with one line. The
package parses, is black-stable, imports, sends the exact wire name and keys on a call through a
recording provider, never runs input (the canary file is not created), and comes out byte-identical
on a second run from the same tools in another order. A sample of the packages, with every kept
regression case, then goes through real mypy --strict and pyright strict in one run each.

The normal suite runs ``TOOLGEN_FUZZ_EXAMPLES`` derandomized examples (default 10 in the fast tier,
40 in the full one: each costs about 0.4 CPU-seconds, and the suite's time is bounded; every kept
regression runs besides); ``nox -s fuzz`` runs thousands, random, and writes the figures (examples,
outcomes, how often each degradation kind fired) to ``TOOLGEN_FUZZ_REPORT``. Every failure hypothesis
found is kept below as an ``@example``.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import io
import json
import os
import random
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from code_mode_helpers import assert_stubs_check
from fuzz_strategies import CANARY_NAME, listings
from gen_helpers import RecordingProvider, black_agrees, import_fresh, pyright_strict, tree
from hypothesis import HealthCheck, Phase, example, given, settings
from tiers import FULL_ENV

import codegen.build
from codegen.build import build_package
from codegen.cli import main as toolgen
from codegen.emit.formatting import format_files
from codegen.model import PackageSpec
from mas.runtime.code_mode import CodeMode

#: The fast tier runs 10 random examples, the full tier 40 (docs/tests.md, "Two tiers"); every kept
#: regression runs in both. The full tier (and ``nox -s fuzz``) type-checks every regression's package
#: (and random ones up to TYPECHECKED) with mypy and pyright; the fast tier type-checks none (its
#: real checker runs are tests/codegen/test_typecheck.py's).
FULL = os.environ.get(FULL_ENV) == "1" or "TOOLGEN_FUZZ_EXAMPLES" in os.environ
EXAMPLES = int(os.environ.get("TOOLGEN_FUZZ_EXAMPLES", "40" if FULL else "10"))
TYPECHECKED = int(os.environ.get("TOOLGEN_FUZZ_TYPECHECKED", "2"))  # random packages type-checked per run
REPORT = os.environ.get("TOOLGEN_FUZZ_REPORT")
#: Every listing that made ``generate`` exit 2 is saved here (``nox -s fuzz`` sets it), so a rare
#: refusal can be turned into an ``@example`` below without shrinking or rerunning.
SAVE_REFUSED = os.environ.get("TOOLGEN_FUZZ_SAVE_REFUSED")
# Shrinking costs minutes per failure at these example sizes; TOOLGEN_FUZZ_SHRINK=1 turns it on.
PHASES = [p for p in Phase if p is not Phase.shrink or os.environ.get("TOOLGEN_FUZZ_SHRINK") == "1"]


def _obj(properties: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, **more}


# Failures found by hypothesis (and the issue's cases), kept as fixed regression examples.
REGRESSIONS: list[dict[str, Any]] = [
    # A ToolInfo constant too long for one line: black wraps it in parentheses (so must the
    # formatter); and a package without output models: outputs/__init__.py imports no TYPE_CHECKING and
    # stays black-stable with an empty model map (both found after the per-tool output modules).
    {
        "tools": [
            {"name": '"""\n__import__("pathlib").Path("toolgen_fuzz_canary").touch()\n"""', "inputSchema": _obj({})}
        ]
    },
    # U+2028 in a property key: offsets from str.splitlines broke black ("UnterminatedString").
    {"tools": [{"name": "t", "inputSchema": _obj({"a\u2028b": {"type": "string"}, "c\x0bd\x85\x0c": {}})}]},
    # Two names reducing to one model class name.
    {"tools": [{"name": n, "inputSchema": _obj({})} for n in ("a_b", "a__b", "get_item", "getItem_", "日本", "中文")]},
    # An inline object named like another tool's model (datamodel-code-generator renumbered ours).
    {
        "tools": [
            {"name": "foo", "inputSchema": _obj({"t_input": _obj({"z": {"type": "string"}})})},
            {"name": "t", "inputSchema": _obj({"x": {"type": "integer"}})},
        ]
    },
    # A long annotation with a union: black parenthesises it (a hand-written layout once did not).
    {"tools": [{"name": "0", "inputSchema": _obj({'"""\n__import__("os")\n"""' * 2: {"$ref": "#"}})}]},
    # East Asian wide characters: black measures width, not length.
    {"tools": [{"name": "wide", "inputSchema": _obj({"\U0002dd6c" * 30 + "=": {}, "input": {}})}]},
    # A pattern pydantic's regex engine rejects made the model module fail to import.
    {
        "tools": [
            {
                "name": "p",
                "inputSchema": _obj({}),
                "outputSchema": _obj({"a": {"type": "string", "pattern": "(["}, "b": {"patternProperties": {"[": {}}}}),
            }
        ]
    },
    # format email needs email-validator; $dynamicRef made datamodel-code-generator fail the run.
    {
        "tools": [
            {
                "name": "e",
                "inputSchema": _obj({"d": {"$dynamicRef": "#meta"}}),
                "outputSchema": _obj({"m": {"type": "string", "format": "email"}}),
            }
        ]
    },
    # maxItems without a type: pydantic applied max_length to a model (TypeError at call time).
    {"tools": [{"name": "m", "inputSchema": _obj({}), "outputSchema": {"maxItems": 3, "anyOf": [{}]}}]},
    # A schema datamodel-code-generator rejects (type: 5) degrades that tool only.
    {"tools": [{"name": "t5", "inputSchema": _obj({"a": {"type": 5}})}, {"name": "ok", "inputSchema": _obj({})}]},
    # A field named Any made datamodel-code-generator alias its import, and an enum of null beside anyOf
    # came out as the bare name: `D: TypeAlias = Any`, a NameError at import (a fuzz session).
    {
        "tools": [
            {
                "name": "bare",
                "inputSchema": _obj(
                    {"Any": {}, "x": {"$ref": "#/$defs/D"}},
                    **{"$defs": {"D": {"anyOf": [{"maxLength": 26}, {"minimum": 2}], "enum": [None]}}},
                ),
            }
        ]
    },
    # External and dangling $ref, non-object outputSchema.
    {
        "tools": [
            {"name": "ext", "inputSchema": _obj({"a": {"$ref": "http://host/profile-schema.json"}})},
            {"name": "dangling", "inputSchema": _obj({"a": {"$ref": "#/$defs/Nope"}}), "outputSchema": True},
        ]
    },
]


# Listings `nox -s fuzz` saved because generate refused them (exit 2: "no model was generated for
# ...Output"): each has an outputSchema that is only a reference to itself ({"$ref": "#", ...}).
REFUSED_DIR = Path(__file__).resolve().parent / "cases" / "fuzz"
REFUSED = sorted(REFUSED_DIR.glob("refused-*.json"))
REGRESSIONS += [json.loads(p.read_text(encoding="utf-8"))["listing"] for p in REFUSED]


@pytest.mark.parametrize("path", REFUSED, ids=[p.stem for p in REFUSED])
def test_the_listings_the_fuzz_session_saw_refused_now_generate(tmp_path: Path, path: Path) -> None:
    (tmp_path / "tools.json").write_text(json.dumps(json.loads(path.read_text())["listing"]), encoding="utf-8")
    code, err, _ = _run(tmp_path, ["--mcp-json", "tools.json", "--out", "out", "--package", "refused"])
    assert code == 0, err
    assert any("refers to the schema it is in; typed as Any [unsupported-ref]" in line for line in err), err


class _Stats:
    def __init__(self) -> None:
        self.examples = 0
        self.exits: Counter[int] = Counter()
        self.kinds: Counter[str] = Counter()
        self.with_degradation = 0
        self.errors: Counter[str] = Counter()

    def as_dict(self) -> dict[str, Any]:
        return {
            "examples": self.examples,
            "exit_codes": dict(sorted(self.exits.items())),
            "examples_with_a_degradation": self.with_degradation,
            "degradations_by_kind": dict(self.kinds.most_common()),
            "errors": dict(self.errors.most_common()),
        }


def _run(cwd: Path, args: list[str]) -> tuple[int, list[str], str]:
    """``toolgen generate`` in-process in ``cwd``: exit code, stderr lines, stdout."""
    err, out = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = toolgen(["generate", *args])
    return code, err.getvalue().splitlines(), out.getvalue()


def _shuffled(listing: dict[str, Any], seed: int) -> dict[str, Any]:
    """The same tools in another order, properties too: the output may not depend on order."""
    rng = random.Random(seed)
    tools = [dict(t) for t in listing["tools"]]
    rng.shuffle(tools)
    for tool in tools:
        schema = tool["inputSchema"]
        if "properties" in schema:
            props = list(schema["properties"].items())
            rng.shuffle(props)
            tool["inputSchema"] = {**schema, "properties": dict(props)}
    return {"tools": tools}


def _check_example(
    work: Path, listing: dict[str, Any], stats: _Stats, keep: Path | None, built: list[PackageSpec]
) -> None:
    stats.examples += 1
    case = work / f"case{stats.examples}"
    case.mkdir()
    package = f"fz{stats.examples}"
    (case / "tools.json").write_text(json.dumps(listing), encoding="utf-8")
    args = ["--mcp-json", "tools.json", "--out", "out", "--package", package]
    code, err, _ = _run(case, args)
    stats.exits[code] += 1
    if code == 2:
        assert len(err) == 1 and err[0].startswith("toolgen: error: "), err
        stats.errors[err[0].split(": ")[-1][:60]] += 1
        if SAVE_REFUSED:
            saved = Path(SAVE_REFUSED)
            saved.mkdir(parents=True, exist_ok=True)
            record = {"error": err[0], "listing": listing}
            (saved / f"refused-{stats.examples}.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
        assert not (case / "out").exists()
        return
    assert code == 0, err
    warnings = [line for line in err if line.startswith("toolgen: warning: ")]
    assert warnings == err, err  # nothing but one-line warnings: no traceback, no library noise
    stats.with_degradation += bool(warnings)
    target = case / "out" / package
    modules = {}
    for path in sorted(target.rglob("*.py")):
        name = path.relative_to(target).as_posix()
        if name.startswith("_r"):  # the shim's files are copied verbatim, as tested; imported below
            continue
        text = path.read_text(encoding="utf-8")
        ast.parse(text)
        modules[name] = text
        # ruff formats every module; black, the reference style, must agree whatever the input.
        assert black_agrees(text), f"{name} is not black-stable"
    assert format_files(modules) == modules  # the formatting pass ran: its output is its fixpoint
    before = tree(target)

    module = import_fresh(case / "out", package)
    # Imported on first use at run time; here, at once: every model module.
    for name in ("inputs", "outputs", *(f"outputs.{m.stem}" for m in sorted((target / "outputs").glob("*.py")))):
        importlib.import_module(f"{package}.{name}")
    provider = RecordingProvider()
    tools = module.Tools(provider).tools  # the source is named after tools.json
    for tool in listing["tools"]:
        # A dotted name is sent with its source in front, so no other source can claim it (issue 31).
        called = f"tools.{tool['name']}" if "." in tool["name"] else tool["name"]
        info = module.TOOLS[called]
        method = getattr(tools, info.method)
        signature = inspect.signature(method).parameters.values()
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature):  # an inputSchema without "type"
            with contextlib.suppress(module.ToolError):
                method(**{"fuzz key": [0, "fuzz"]})
            assert provider.calls[-1][:2] == (called, {"fuzz key": [0, "fuzz"]})
            continue
        params = [p.name for p in signature]
        values = {p: [i, "fuzz"] for i, p in enumerate(params)}  # a list is never an omit marker
        try:
            method(**values)
        except module.ToolError:
            pass  # no structured content for an output model: a typed error, never a crash
        sent_name, sent, _ = provider.calls[-1]
        assert sent_name == called
        assert sorted(sent) == sorted(tool["inputSchema"].get("properties", {}))
        assert sorted(map(tuple, sent.values())) == sorted(map(tuple, values.values()))
    assert not (case / CANARY_NAME).exists() and not Path(CANARY_NAME).exists()

    # Same tools, another order: byte-identical (--check writes nothing and exits 0 when current).
    (case / "tools.json").write_text(json.dumps(_shuffled(listing, stats.examples)), encoding="utf-8")
    code, err2, out = _run(case, [*args, "--check"])
    assert (code, err2) == (0, err), out
    assert tree(target) == before
    if keep is not None:
        shutil.copytree(target, keep / package)
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[name]
    shutil.rmtree(case)
    stats.kinds.update(d.kind for d in built[-1].degradations)
    assert len(built[-1].degradations) == len(warnings)


def _typecheck(folder: Path) -> None:
    packages = sorted(p.name for p in folder.iterdir() if p.is_dir())
    if not packages:
        return
    (folder / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--strict", "--python-version", "3.11",
         "--no-pretty", "--no-color-output", "--no-error-summary", *packages],
        cwd=folder, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    report = pyright_strict(folder, packages)
    found = [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d.get('rule')}: {d['message']}"
        for d in report["generalDiagnostics"]
        if d["severity"] in ("error", "warning")
    ]
    assert found == [], "\n".join(found[:20])
    # The code-mode stubs type-check in the sandbox's own checker, every tool with example arguments.
    for package in packages:
        module = import_fresh(folder, package)
        with CodeMode(RecordingProvider(), package=module) as mode:
            assert assert_stubs_check(mode, module.code_mode.MODULES) == len(module.TOOLS)


@pytest.mark.slow
@pytest.mark.timeout(600 + 10 * EXAMPLES)  # each example generates twice and imports; the machine may be busy
def test_random_tool_lists_generate_working_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stats = _Stats()
    built: list[PackageSpec] = []  # the intermediate forms, for the degradation kinds behind the warnings

    def recording_build(*args: Any, **kwargs: Any) -> PackageSpec:
        built.append(build_package(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(codegen.build, "build_package", recording_build)  # render_files imports it on a miss
    work, keep = tmp_path / "work", tmp_path / "keep"
    work.mkdir()
    keep.mkdir()
    kept: list[int] = []

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=REPORT is None,  # the normal suite is reproducible; the fuzz session explores
        database=None,
        phases=PHASES,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    @given(listing=listings())
    def check(listing: dict[str, Any]) -> None:
        regression = any(listing is r for r in REGRESSIONS)
        sample = FULL and (regression or len(kept) < TYPECHECKED)
        _check_example(work, listing, stats, keep if sample else None, built)
        if sample:
            kept.append(stats.examples)

    for case in REGRESSIONS:
        check = example(listing=case)(check)
    check()
    if REPORT:
        Path(REPORT).write_text(json.dumps(stats.as_dict(), indent=2) + "\n", encoding="utf-8")
    _typecheck(keep)
    assert stats.examples >= min(EXAMPLES, 50)  # hypothesis ran them (the regressions count too)
