"""Learned contents types (codegen/infer.py ``infer_contents``): ``toolgen record`` records resource
reads beside tool results, and ``toolgen generate`` types a JSON resource's or template's contents
from them by the tools' rule (``learn_json``), in the package (``SampleWeatherContents.value``) and
in code mode's stubs; the lock records the learned type, so a changed shape is drift.

Against the sample server with ``--with-resources`` (a real process), through the CLI.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import forked_python, import_fresh

from codegen.cli import main as toolgen
from codegen.infer import RESOURCE_KEY, infer_contents
from codegen.model import SourceTools
from mas.runtime.registry import RuntimeRegistry
from mas.runtime.samples import Sample, load_samples, render_samples

EXAMPLES = """\
- resource: sample://weather/Paris
- resource: sample://weather/Lyon?units=fahrenheit
- resource: sample://cities.json
  server: sample
- resource: sample://guide                # text: recorded, no type learned
- resource: sample://weather/             # refused by the server: reported, not kept
"""


def _toolgen(cwd: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd)
        code = toolgen(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("contents")
    run = forked_python("-m", "mas.samples.mcp_server", "--with-resources")
    server = {"name": "sample", "protocol": "mcp", "transport": "stdio", **run, "connect_timeout_seconds": 30}
    infra = {"kind": "ToolServerRegistry", "spec": {"servers": [server]}}
    (folder / "infra.yaml").write_text(json.dumps(infra), encoding="utf-8")
    (folder / "examples.yaml").write_text(EXAMPLES, encoding="utf-8")
    return folder


GENERATE = ["generate", "--infra", "infra.yaml", "--samples", "s.json", "--lock", "lock.json", "--out", "out",
            "--package", "learned", "-q"]  # fmt: skip


def test_record_keeps_reads_and_generate_types_the_json_contents(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _toolgen(recorded, ["record", "--examples", "examples.yaml", "--infra", "infra.yaml",
                                         "--samples", "s.json"], capsys)  # fmt: skip
    assert code == 1 and out == "toolgen: s.json: 4 result(s) recorded\n", err
    assert "not recorded (error result): sample://weather/: " in err
    samples = load_samples(recorded / "s.json")
    assert sorted(s.resource for s in samples) == [
        "sample://cities.json", "sample://guide", "sample://weather/Lyon?units=fahrenheit", "sample://weather/Paris"
    ]  # fmt: skip
    assert all(s.tool == "" and s.result["contents"][0]["uri"] == s.resource for s in samples)
    assert (recorded / "s.json").read_text(encoding="utf-8") == render_samples(samples)  # canonical

    code, out, err = _toolgen(recorded, GENERATE, capsys)
    assert code == 0, err
    contents = (recorded / "out" / "learned" / "_contents.py").read_text(encoding="utf-8")
    assert "class SampleWeatherValue(TypedDict):\n    city: str\n    conditions: str\n    humidity: int" in contents
    assert "class SampleCitiesValueCity(TypedDict):\n    capital: NotRequired[bool]" in contents  # only capitals
    surface = (recorded / "out" / "learned" / "surface.py").read_text(encoding="utf-8")
    assert "class SampleWeatherContents(JsonContents):" in surface and "    value: SampleWeatherValue\n" in surface
    assert "def weather(self, *, city: str, units: str | None = None) -> SampleWeatherContents:" in surface
    assert "def guide(self) -> TextContents:" in surface  # text: nothing to learn
    stub = (recorded / "out" / "learned" / "code_mode" / "sample.pyi").read_text(encoding="utf-8")
    assert "async def weather(self, *, city: str, units: str | None = None) -> SampleWeatherValue:" in stub
    assert "class SampleWeatherValue(TypedDict):" in stub
    lock = json.loads((recorded / "lock.json").read_text())["servers"]["sample"]["inferred"]
    assert lock[f"{RESOURCE_KEY}sample://weather/{{city}}{{?units}}"]["samples"] == 2
    assert lock[f"{RESOURCE_KEY}sample://cities.json"]["samples"] == 1

    package = import_fresh(recorded / "out", "learned")
    with RuntimeRegistry.from_sources(infra=[recorded / "infra.yaml"]) as registry:
        weather = package.Tools(registry).sample.resources.weather(city="Osaka")  # never recorded: same shape
        assert type(weather).__name__ == "SampleWeatherContents" and weather.value["city"] == "Osaka"

    # Deterministic: the same samples give the same bytes, live or from the lock.
    before = {p: p.read_bytes() for p in sorted((recorded / "out").rglob("*")) if p.is_file()}
    assert _toolgen(recorded, [*GENERATE, "--offline", "--check"], capsys)[0] == 0
    assert _toolgen(recorded, GENERATE, capsys)[0] == 0
    assert {p: p.read_bytes() for p in sorted((recorded / "out").rglob("*")) if p.is_file()} == before


def test_a_recorded_shape_that_changes_is_drift(recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not (recorded / "lock.json").is_file():
        assert _toolgen(recorded, ["record", "--examples", "examples.yaml", "--infra", "infra.yaml",
                                   "--samples", "s.json"], capsys)[0] == 1  # fmt: skip
        assert _toolgen(recorded, GENERATE, capsys)[0] == 0
    samples = load_samples(recorded / "s.json")
    text = json.dumps({"city": "Nice", "conditions": "sunny", "humidity": "high", "temperature": 20.5})
    drifted = {"contents": [{"uri": "sample://weather/Nice", "mimeType": "application/json", "text": text}]}
    (recorded / "s.json").write_text(render_samples([*samples, Sample("sample", "", drifted, "sample://weather/Nice")]))
    code, out, _ = _toolgen(recorded, [*GENERATE[:-1], "--offline", "--check"], capsys)
    assert code == 1
    assert (
        "toolgen: server 'sample': resource 'sample://weather/{city}{?units}': learned contents: field 'humidity': "
        "type changed (breaking)"
    ) in out
    (recorded / "s.json").write_text(render_samples(samples))  # as it was


def _source(surface: dict[str, Any]) -> SourceTools:
    return SourceTools("srv", "mcp-live", "MCP server 'srv'", (), surface=surface)


def _read(uri: str, text: str) -> Sample:
    return Sample("srv", "", {"contents": [{"uri": uri, "mimeType": "application/json", "text": text}]}, uri)


def test_the_one_rule_decides_what_is_learned() -> None:
    surface = {
        "resources": ({"uri": "x://a", "mimeType": "application/json"}, {"uri": "x://t", "mimeType": "text/plain"}),
        "resource_templates": ({"uriTemplate": "x://items/{id}", "mimeType": "application/json"},),
    }
    samples = [
        _read("x://a", '{"n": 1}'), _read("x://a", '{"n": 2, "m": "x"}'),  # a field seen once: optional
        _read("x://t", '{"n": 1}'),  # text/plain: not a JSON resource
        _read("x://items/1", '{"id": 1}'), _read("x://items/2", "not json"),  # one read is not JSON: no type
        Sample("other", "", {"contents": []}, "x://a"),  # another source's
    ]  # fmt: skip
    found = infer_contents(_source(surface), samples)
    assert set(found) == {"resource x://a"}
    assert found["resource x://a"].samples == 2
    schema = found["resource x://a"].schema
    assert schema is not None and schema["required"] == ["n"] and set(schema["properties"]) == {"m", "n"}
    # The template learns from its own reads only (a listed resource's URI is that resource's).
    wide = {**surface, "resource_templates": ({"uriTemplate": "x://{name}", "mimeType": "application/json"},)}
    only = infer_contents(_source(wide), [_read("x://b", '{"id": 1}'), _read("x://a", '{"n": 1}')])
    assert set(only) == {"resource x://a", "resource x://{name}"} and only["resource x://{name}"].samples == 1


WRONG_KEY = """\
from __future__ import annotations

from mas.runtime.registry import RuntimeRegistry
from learned import Tools


def use(registry: RuntimeRegistry) -> float:
    weather = Tools(registry).sample.resources.weather(city="Paris")
    print(weather.value["temp"])  # a key the recorded reads never had
    return weather.value["temperature"]
"""


@pytest.mark.full  # the fast tier type-checks generated packages in test_typecheck.py
@pytest.mark.slow  # one mypy --strict and one pyright run over the package
@pytest.mark.timeout(600)
def test_both_checkers_type_the_learned_value(recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not (recorded / "out" / "learned" / "_contents.py").is_file():
        _toolgen(recorded, ["record", "--examples", "examples.yaml", "--infra", "infra.yaml", "--samples", "s.json"],
                 capsys)  # fmt: skip
        assert _toolgen(recorded, GENERATE, capsys)[0] == 0
    work = recorded / "out"
    (work / "use_learned.py").write_text(WRONG_KEY, encoding="utf-8")
    mypy = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "learned", "use_learned.py"],
                          cwd=work, capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    errors = [line for line in mypy.stdout.splitlines() if ": error:" in line]
    assert errors == ['use_learned.py:9: error: TypedDict "SampleWeatherValue" has no key "temp"  [typeddict-item]'], (
        mypy.stdout
    )
    (work / "pyrightconfig.json").write_text(
        json.dumps({"typeCheckingMode": "strict", "include": ["learned", "use_learned.py"]})
    )
    pyright = subprocess.run([str(Path(sys.executable).parent / "pyright"), "--outputjson"], cwd=work,
                             capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    report = json.loads(pyright.stdout)
    errors_p = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    found = sorted((d["file"].rsplit("/", 1)[-1], d["range"]["start"]["line"] + 1, d.get("rule", "")) for d in errors_p)
    assert found == [
        ("use_learned.py", 9, "reportGeneralTypeIssues"),  # '"temp" is not a defined key in "SampleWeatherValue"'
        ("use_learned.py", 9, "reportUnknownArgumentType"),
    ], errors_p
    assert any('"temp" is not a defined key in "SampleWeatherValue"' in d["message"] for d in errors_p), errors_p
