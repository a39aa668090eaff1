"""Record -> generate -> call, against the real sample MCP server; the samples file and the recorder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import REPO, generate, import_fresh
from mcp_helpers import sample_stdio_infra

from codegen.cli import main as toolgen
from codegen.infer import InferredOutput, infer_schema, inferred_output_changes
from mas.runtime.config import MCPServerConfig
from mas.runtime.registry import RuntimeRegistry
from mas.runtime.samples import (
    Sample,
    SampleRecorder,
    load_samples,
    merge_samples,
    provider_secrets,
    render_samples,
    write_samples,
)

INFRA = Path(sample_stdio_infra())
EXAMPLES = """\
- tool: list_cities
- tool: list_cities
  arguments: {country: FR}
- tool: list_cities
  arguments: {country: JP}
- tool: notes.delete          # an error result: reported, not kept
  arguments: {id: missing}
"""


def _toolgen(cwd: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd)
        code = toolgen(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_record_then_generate_then_call_through_the_typed_method(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "examples.yaml").write_text(EXAMPLES, encoding="utf-8")
    code, out, err = _toolgen(
        tmp_path, ["record", "--examples", "examples.yaml", "--infra", str(INFRA), "--samples", "s.json"], capsys
    )
    assert code == 1, err  # the failed example is a broken one: CI sees it (issue 30, item 10)
    assert out == "toolgen: s.json: 3 result(s) recorded\n"
    assert err == (
        "toolgen: not recorded (error result): notes.delete: note missing not found\n"
        "toolgen: 1 of 4 call(s) returned an error\n"
    )
    samples = load_samples(tmp_path / "s.json")
    assert [(s.source, s.tool) for s in samples] == [("sample", "list_cities")] * 3
    assert (tmp_path / "s.json").read_text(encoding="utf-8") == render_samples(samples)  # canonical

    args = ["--infra", str(INFRA), "--samples", "s.json", "--lock", "lock.json", "--out", "out"]
    code, out, err = _toolgen(tmp_path, ["generate", *args, "--package", "recorded"], capsys)
    assert code == 0, err
    assert "toolgen: typed results: declared 6, inferred 1, untyped 2\n" in out  # count_slowly, notes.delete
    pkg = import_fresh(tmp_path / "out", "recorded")
    model = pkg.TOOLS["list_cities"].output_model
    fields = model.model_fields
    assert fields["total"].is_required() and fields["cities"].is_required()
    city = fields["cities"].annotation.__args__[0]
    assert {k: v.is_required() for k, v in city.model_fields.items()} == {
        "capital": False,  # only capitals have it: seen in some samples
        "country": True,
        "name": True,
        "population": True,
    }
    with RuntimeRegistry.from_sources(infra=[INFRA]) as registry:
        tools = pkg.Tools(registry).sample
        german = tools.list_cities(country="DE")  # never recorded: same shape
        assert isinstance(german, model)
        assert [(c.name, c.capital) for c in german.cities] == [("Berlin", True), ("Hamburg", None)]
        assert german.total == 2
        full = pkg.Tools(registry).results.sample.list_cities()
        assert full.value.model_dump(mode="json", exclude_unset=True) == json.loads(full.text)
    # --check is current with the samples; a contradicting sample makes it stale.
    check = ["generate", *args, "--package", "recorded", "--offline", "--check"]
    assert _toolgen(tmp_path, check, capsys)[0] == 0
    drift = {"content": [{"type": "text", "text": '{"cities": "none", "total": 0}'}], "isError": False}
    write_samples(tmp_path / "s.json", [*samples, Sample("sample", "list_cities", drift)])
    code, out, _ = _toolgen(tmp_path, check, capsys)
    assert code == 1 and "outputs/sample_list_cities_output.py" in out  # its model changed


def test_record_exits_1_when_every_call_failed_and_0_when_every_call_was_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30, item 10: "0 result(s) recorded" exited 0, so CI could not catch a broken examples file."""
    (tmp_path / "broken.yaml").write_text("- tool: notes.delete\n  arguments: {id: gone}\n- tool: no_such_tool\n")
    record = ["record", "--infra", str(INFRA), "--samples", "s.json", "--examples"]
    code, out, err = _toolgen(tmp_path, [*record, "broken.yaml"], capsys)
    assert (code, out) == (1, "toolgen: s.json: 0 result(s) recorded\n")
    assert err.splitlines()[-1] == "toolgen: 2 of 2 call(s) returned an error"
    (tmp_path / "good.yaml").write_text("- tool: list_cities\n")
    code, out, err = _toolgen(tmp_path, [*record, "good.yaml"], capsys)
    assert (code, out, err) == (0, "toolgen: s.json: 1 result(s) recorded\n", "")


def test_registry_records_sampled_traffic_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "traffic.json"
    with RuntimeRegistry.from_sources(infra=[INFRA]) as registry:
        registry.call_tool("list_cities", {})
    assert not path.exists()  # off by default
    recorder = SampleRecorder(path, rate=0.5, seed=7)
    with RuntimeRegistry.from_sources(infra=[INFRA], recorder=recorder) as registry:
        for country in ["FR", "DE", "JP", "FR", "DE", "JP", "US", "IT"]:
            registry.call_tool("list_cities", {"country": country})
        registry.call_tool("notes.delete", {"id": "missing"})  # an error: never kept
    kept = load_samples(path)
    assert 0 < len(kept) < 8  # sampled, and the two empty results (US, IT) are one sample
    assert {s.tool for s in kept} == {"list_cities"}
    assert len({json.dumps(s.result, sort_keys=True) for s in kept}) == len(kept)  # no duplicates


def test_secrets_from_env_headers_are_never_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLGEN_TEST_TOKEN", "s3cr3t-value")
    config = MCPServerConfig(name="secure", transport="streamable-http", url="http://127.0.0.1:9/mcp",
                             headers={"Authorization": "Bearer env:TOOLGEN_TEST_TOKEN"})  # fmt: skip

    class Provider:  # only its config matters here: the recorder resolves secrets as the provider does
        def __init__(self) -> None:
            self.config = config

    recorder = SampleRecorder(tmp_path / "s.json")
    recorder.add_secrets(provider_secrets([Provider()]))
    leaked = {"s3cr3t-value": "Bearer s3cr3t-value", "list": ["s3cr3t-value", 1]}
    recorder.observe("secure", "whoami", {"content": [{"type": "text", "text": json.dumps(leaked)}],
                                          "structuredContent": leaked, "isError": False})  # fmt: skip
    recorder.flush()
    text = (tmp_path / "s.json").read_text(encoding="utf-8")
    assert "s3cr3t" not in text and text.count("***") == 6


def test_samples_are_bounded_per_tool_and_by_size_and_duplicates_dropped() -> None:
    def sample(i: int, tool: str = "t") -> Sample:
        return Sample("src", tool, {"content": [], "structuredContent": {"i": i}, "isError": False})

    merged = merge_samples([sample(i) for i in range(15)], [sample(i) for i in range(10, 30)] + [sample(0, "u")])
    assert [s.result["structuredContent"]["i"] for s in merged if s.tool == "t"] == list(range(10, 30))
    assert [s.tool for s in merged].count("u") == 1
    big = Sample("src", "t", {"content": [{"type": "text", "text": "x" * 70_000}], "isError": False})
    assert merge_samples([], [big]) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[", "s.json:1: not JSON: Expecting value"),
        ('{"version": 2, "samples": []}', "s.json: /version: version must be 1"),
        ('{"version": 1, "samples": [{"source": "a", "tool": "", "result": {}}]}',
         "s.json: /samples/0/tool: tool must be a non-empty string"),
        ('{"version": 1, "samples": [{"source": "a", "tool": "t", "result": {"content": 3}}]}',
         "s.json: /samples/0/result/content: content must be an array"),
    ],
)  # fmt: skip
def test_bad_samples_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    (tmp_path / "s.json").write_text(text, encoding="utf-8")
    (tmp_path / "out").mkdir()
    listing = REPO / "tests" / "fixtures" / "mcp-tools-list" / "time.json"
    assert generate(tmp_path, ["--mcp-json", str(listing), "--samples", "s.json", "--out", "out"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"toolgen: error: {message}"]
    assert list((tmp_path / "out").iterdir()) == []


def test_inferred_output_changes_have_declared_output_severities() -> None:
    def model(*values: Any) -> InferredOutput:
        return InferredOutput("model", len(values), infer_schema(values))

    old = {"t": model({"a": 1, "b": "x", "c": [1]}), "gone": model({"a": 1}), "prose": InferredOutput("text", 1)}
    new = {"t": model({"a": "1", "c": [1.5], "d": True}, {"a": "2"}), "prose": model({"text": "now JSON"})}
    found = [(c.tool, c.severity, c.kind, c.pointer) for c in inferred_output_changes(old, new, source="src")]
    assert found == [
        ("gone", "breaking", "output-schema-removed", "/inferredOutputSchema"),
        ("prose", "breaking", "output-type-changed", "/inferredOutputSchema/type"),  # str -> an object
        ("prose", "compatible", "output-field-added", "/inferredOutputSchema/properties/text"),
        ("prose", "compatible", "output-constraint-changed", "/inferredOutputSchema/additionalProperties"),
        ("t", "breaking", "output-type-changed", "/inferredOutputSchema/properties/a/type"),
        ("t", "breaking", "output-field-removed", "/inferredOutputSchema/properties/b"),
        ("t", "breaking", "output-field-now-optional", "/inferredOutputSchema/properties/c"),
        ("t", "breaking", "output-type-changed", "/inferredOutputSchema/properties/c/items/type"),  # integer -> number
        ("t", "compatible", "output-field-added", "/inferredOutputSchema/properties/d"),
    ]
    messages = [c.message for c in inferred_output_changes(old, new, source="src")]
    assert messages[:2] == ["inferred output schema removed", "inferred output: type changed"]
    assert messages[5] == "inferred output field 'b' removed"


@pytest.mark.full  # pyright over generated packages: test_typecheck.py in the fast tier
@pytest.mark.slow  # an old-SDK server, then pyright over the package
def test_a_package_whose_only_untyped_tool_was_inferred_as_text_passes_strict_pyright(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30, item 5: ``Import "_ToolOutput" is not accessed`` once the one untyped tool became ``str``.
    FastMCP on mcp 1.6 declares no output schemas, and ``greet`` answers with plain text."""
    from gen_helpers import pyright_strict
    from old_sdk import OLD_SDK_SERVER, old_sdk_python

    greet = {"name": "greet", "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}
    server = {"name": "old", "protocol": "mcp", "transport": "stdio", "command": str(old_sdk_python("1.6.0")),
              "args": [str(OLD_SDK_SERVER)], "connect_mode": "legacy", "exit_grace_seconds": 0.2,
              "tools": [greet]}  # fmt: skip
    (tmp_path / "infra.yaml").write_text(json.dumps({"kind": "ToolServerRegistry", "spec": {"servers": [server]}}))
    (tmp_path / "examples.yaml").write_text("- tool: greet\n  arguments: {name: Ada}\n")
    code, _, err = _toolgen(tmp_path, ["record", "--examples", "examples.yaml", "--infra", "infra.yaml"], capsys)
    assert code == 0, err
    args = ["generate", "--infra", "infra.yaml", "--out", "out", "--package", "texts", "-q"]
    assert _toolgen(tmp_path, args, capsys)[0] == 0
    assert "_info_old__greet: _ToolInfo[str]" in (tmp_path / "out" / "texts" / "_tools.py").read_text()
    report = pyright_strict(tmp_path / "out", ["texts"])
    assert [d["message"] for d in report["generalDiagnostics"] if d["severity"] in ("error", "warning")] == []


def test_a_first_inferred_type_is_breaking_and_says_what_it_means(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30, item 11: after a user's first ``record``, the same run's drift said "1 breaking" and nothing more."""
    args = ["generate", "--infra", str(INFRA), "--out", "out", "--package", "firsts"]
    assert _toolgen(tmp_path, [*args, "-q"], capsys)[0] == 0  # the lock, with no samples yet
    (tmp_path / "examples.yaml").write_text("- tool: list_cities\n", encoding="utf-8")
    assert _toolgen(tmp_path, ["record", "--examples", "examples.yaml", "--infra", str(INFRA), "-q"], capsys)[0] == 0
    code, out, err = _toolgen(tmp_path, args, capsys)
    assert code == 0, err
    lines = [
        line
        for line in out.splitlines()
        if line.startswith("toolgen: ") and ("list_cities" in line or "change(s)" in line)
    ]
    assert lines == [
        "toolgen: server 'sample': tool 'list_cities': inferred output type added (first recorded results: "
        "the method returns it instead of ToolOutput) (breaking)",
        "toolgen: 1 change(s): 1 breaking, 0 review, 0 compatible",
        "toolgen: 1 of the breaking change(s) are first inferred types: the methods return the type learned from "
        "the recorded results instead of ToolOutput; expected once after `toolgen record` (docs/samples.md)",
    ]
