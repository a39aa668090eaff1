"""kind: Tool loading: definitions, line maps and one-line ConfigErrors with exact lines."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mas.runtime.config import ConfigError, SourceLocation
from mas.runtime.yaml_source import load_schema, load_tool_documents, load_yaml_documents

GOOD = """\
apiVersion: toolgen/v1
kind: Tool
metadata:
  name: get_weather
spec:
  title: Weather
  description: Weather for a city.
  parameters:
    type: object
    properties:
      city: {type: string}
    required: [city]
  read_only: true
  idempotent: false
  handler: weather_pkg.handlers:get_weather
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def error_of(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_tool_documents([path])
    text = str(info.value)
    assert "\n" not in text
    return text


def test_a_good_document_becomes_a_definition(tmp_path: Path) -> None:
    path = write(tmp_path, "weather.yaml", GOOD)
    [definition] = load_tool_documents([path])
    assert definition.name == "get_weather"
    assert definition.description == "Weather for a city."
    assert definition.handler == "weather_pkg.handlers:get_weather"
    assert dict(definition.advertise) == {"title": "Weather", "idempotent": False, "read_only": True}
    assert definition.location == SourceLocation(str(path), 4, "metadata.name")
    assert definition.handler_location == SourceLocation(str(path), 15, "spec.handler")
    assert definition.to_entry() == {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "title": "Weather",
        "idempotent": False,
        "read_only": True,
        "annotations": {"idempotentHint": False, "readOnlyHint": True},
    }


def test_to_entry_returns_a_fresh_copy(tmp_path: Path) -> None:
    [definition] = load_tool_documents([write(tmp_path, "w.yaml", GOOD)])
    definition.to_entry()["parameters"]["properties"]["city"]["type"] = "integer"
    assert definition.to_entry()["parameters"]["properties"]["city"] == {"type": "string"}


def test_multi_document_file_and_line_map(tmp_path: Path) -> None:
    text = GOOD + "---\n" + GOOD.replace("get_weather", "get_forecast") + "---\n"
    path = write(tmp_path, "two.yaml", text)
    assert [d.name for d in load_tool_documents([path])] == ["get_weather", "get_forecast"]
    [(first, lines1), (_, lines2)] = load_yaml_documents(path)  # the empty trailing document is skipped
    assert first["metadata"]["name"] == "get_weather"
    assert lines1.line(("spec", "parameters", "required", 0)) == 12
    assert lines2.line(("metadata", "name")) == 20
    assert lines2.line(("spec", "no_such_key")) == 21  # a missing key points at its parent


def test_folders_are_read_recursively_in_sorted_order(tmp_path: Path) -> None:
    write(tmp_path, "b.yaml", GOOD.replace("get_weather", "b_tool"))
    write(tmp_path, "a/z.yml", GOOD.replace("get_weather", "az_tool"))
    write(tmp_path, "a.yaml", GOOD.replace("get_weather", "a_tool"))
    write(tmp_path, "notes.txt", "not yaml")
    assert [d.name for d in load_tool_documents([tmp_path])] == ["a_tool", "az_tool", "b_tool"]


def test_library_samples_load_with_stable_names(repo_root: Path) -> None:
    names = [d.name for d in load_tool_documents([repo_root / "library-samples" / "tools"])]
    assert names == ["current_time", "unit_convert", "web_search", "summarize_text"]


def test_schemas_are_package_resources() -> None:
    assert load_schema("mas.runtime.contracts", "tool.schema.yaml")["title"] == "Tool"
    assert load_schema("mas.runtime", "infra.schema.yaml")["title"] == "ToolServerRegistry"


def test_yaml_syntax_error_has_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", GOOD.replace("required: [city]", "required: [city"))
    assert error_of(path) == (
        f"{path}:13: YAML syntax error: expected ',' or ']', but got ':' "
        "(while parsing a flow sequence that starts on line 12)"
    )


def test_yaml_error_at_end_of_file_points_at_the_unclosed_construct(tmp_path: Path) -> None:
    path = write(tmp_path, "eof.yaml", GOOD + "  meta: {owner: x\n")
    assert error_of(path) == (
        f"{path}:16: YAML syntax error: expected ',' or '}}', but got '<stream end>' (while parsing a flow mapping)"
    )


def test_yaml_tab_indentation(tmp_path: Path) -> None:
    path = write(tmp_path, "tab.yaml", GOOD.replace("  read_only: true", "\tread_only: true"))
    assert error_of(path).startswith(f"{path}:13: YAML syntax error: ")


def test_wrong_kind(tmp_path: Path) -> None:
    path = write(tmp_path, "agent.yaml", GOOD.replace("kind: Tool", "kind: Agent"))
    assert error_of(path) == f"{path}:2: kind: must be 'Tool', got 'Agent'"


def test_wrong_kind_in_second_document(tmp_path: Path) -> None:
    path = write(tmp_path, "two.yaml", GOOD + "---\nkind: Agent\n")
    assert error_of(path) == f"{path}:17: kind: must be 'Tool', got 'Agent'"


def test_missing_metadata_name(tmp_path: Path) -> None:
    path = write(tmp_path, "noname.yaml", GOOD.replace("  name: get_weather\n", "  description: x\n"))
    assert error_of(path) == f"{path}:3: metadata.name: required key is missing"


def test_invalid_json_schema_points_at_the_offending_line(tmp_path: Path) -> None:
    path = write(tmp_path, "schema.yaml", GOOD.replace("city: {type: string}", "city: {type: strin}"))
    assert error_of(path) == (
        f"{path}:11: spec.parameters.properties.city.type: invalid JSON Schema: 'strin' is not a JSON Schema type"
    )


def test_invalid_json_schema_keyword_value(tmp_path: Path) -> None:
    path = write(tmp_path, "schema.yaml", GOOD.replace("required: [city]", "required: city"))
    assert error_of(path) == f"{path}:12: spec.parameters.required: invalid JSON Schema: 'city' is not of type 'array'"


def test_parameters_must_be_an_object_schema(tmp_path: Path) -> None:
    path = write(tmp_path, "arr.yaml", GOOD.replace("    type: object\n", "    type: array\n", 1))
    assert error_of(path) == f"{path}:9: spec.parameters.type: must be 'object', not 'array'"


def test_unknown_key(tmp_path: Path) -> None:
    path = write(tmp_path, "typo.yaml", GOOD.replace("  read_only: true", "  colour: red"))
    message = error_of(path)
    assert message.startswith(f"{path}:13: spec.colour: unknown key (allowed: description, destructive, ")


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "  read_only: true",
            "  readonly: true",
            "13: spec.readonly: unknown key 'readonly' (did you mean 'read_only'?)",
        ),
        ("  parameters:", "  parameter:", "8: spec.parameter: unknown key 'parameter' (did you mean 'parameters'?)"),
    ],
)
def test_misspelt_key_names_the_likely_intent(tmp_path: Path, old: str, new: str, expected: str) -> None:
    """Not "required key is missing", which the misspelling also causes."""
    path = write(tmp_path, "typo.yaml", GOOD.replace(old, new))
    assert error_of(path) == f"{path}:{expected}"


def test_unknown_top_level_key(tmp_path: Path) -> None:
    path = write(tmp_path, "top.yaml", GOOD + "status: draft\n")
    assert error_of(path) == f"{path}:16: status: unknown key (allowed: apiVersion, kind, metadata, spec)"


def test_wrong_type(tmp_path: Path) -> None:
    path = write(tmp_path, "type.yaml", GOOD.replace("read_only: true", "read_only: yes please"))
    assert error_of(path) == f"{path}:13: spec.read_only: expected boolean or null, got string"


def test_bad_enum_and_bad_timeout(tmp_path: Path) -> None:
    path = write(tmp_path, "enum.yaml", GOOD + "  task_support: sometimes\n")
    assert (
        error_of(path) == f"{path}:16: spec.task_support: must be one of forbidden, optional, required, not 'sometimes'"
    )
    path = write(tmp_path, "timeout.yaml", GOOD + "  timeout_seconds: 0\n")
    assert error_of(path) == f"{path}:16: spec.timeout_seconds: must be greater than 0, not 0"


def test_bad_tool_name(tmp_path: Path) -> None:
    path = write(tmp_path, "name.yaml", GOOD.replace("name: get_weather", "name: get weather"))
    assert error_of(path) == f"{path}:4: metadata.name: 'get weather' does not match ^[A-Za-z0-9_.-]{{1,128}}$"


def test_bad_handler_format(tmp_path: Path) -> None:
    path = write(
        tmp_path, "h.yaml", GOOD.replace("weather_pkg.handlers:get_weather", "weather_pkg.handlers.get_weather")
    )
    assert error_of(path).startswith(f"{path}:15: spec.handler: 'weather_pkg.handlers.get_weather' does not match ")


def test_duplicate_key_in_a_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, "dup.yaml", GOOD + "  read_only: false\n")
    assert error_of(path) == f"{path}:16: spec.read_only: duplicate key (first set on line 13)"


def test_duplicate_tool_names_across_files_name_both(tmp_path: Path) -> None:
    first = write(tmp_path, "a.yaml", GOOD)
    second = write(tmp_path, "b.yaml", "# the same tool again\n" + GOOD)
    with pytest.raises(ConfigError) as info:
        load_tool_documents([tmp_path])
    assert str(info.value) == (
        f"{second}:5: metadata.name: duplicate tool name 'get_weather' (also defined at {first}:4)"
    )


def test_a_document_must_be_a_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, "list.yaml", "- 1\n- 2\n")
    assert error_of(path) == f"{path}:1: a document must be a mapping, got array"


def test_missing_path(tmp_path: Path) -> None:
    assert error_of(tmp_path / "nope") == f"{tmp_path / 'nope'}: tool path does not exist"


def test_loading_does_not_import_handlers(tmp_path: Path) -> None:
    path = write(tmp_path, "x.yaml", GOOD.replace("weather_pkg.handlers", "module_that_does_not_exist"))
    assert [d.handler for d in load_tool_documents([path])] == ["module_that_does_not_exist:get_weather"]


def test_aliases_are_walked_once_and_point_at_the_alias_key(tmp_path: Path) -> None:
    text = GOOD.replace("  read_only: true\n", "  output_schema: *params\n").replace(
        "  parameters:\n", "  parameters: &params\n"
    )
    path = write(tmp_path, "alias.yaml", text)
    [definition] = load_tool_documents([path])
    assert definition.advertise["output_schema"] == definition.parameters
    [(_, lines)] = load_yaml_documents(path)
    assert lines.line(("spec", "parameters", "properties", "city")) == 11
    assert lines.line(("spec", "output_schema", "properties", "city")) == 13
