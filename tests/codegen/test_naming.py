"""The naming rule of docs/generator.md ("Names"), with every expected name written out by hand."""

from __future__ import annotations

import keyword

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codegen.naming import assign_names, class_name, snake_case, to_identifier, unique


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        ("getWeather", "get_weather"),  # rule 1: camelCase splits
        ("HTTPServer", "http_server"),
        ("parseHTTPResponse2", "parse_http_response2"),
        ("v2Api", "v2_api"),
        ("already_snake", "already_snake"),
        ("UPPER", "upper"),
        ("search-docs", "search_docs"),  # rule 2: anything else becomes _
        ("notes.create", "notes_create"),
        ("a b/c", "a_b_c"),
        ("café", "caf_"),  # ASCII only
        ("", ""),
    ],
)
def test_snake_case(wire: str, expected: str) -> None:
    assert snake_case(wire) == expected


@pytest.mark.parametrize(
    ("wire", "prefix", "expected"),
    [
        ("", "tool", "tool"),  # rule 3: empty
        ("2fa", "tool", "tool_2fa"),  # rule 3: starts with a digit
        ("_private", "arg", "arg_private"),  # rule 3: starts with _
        ("-x", "ns", "ns_x"),
        ("class", "tool", "class_"),  # rule 4: keywords
        ("match", "tool", "match_"),  # soft keywords too
        ("type", "tool", "type_"),
        ("list", "tool", "list_"),  # builtins, for methods
        ("Str", "tool", "str_"),
        ("get", "tool", "get"),
        ("+-", "tool", "tool_2b_2d"),  # nothing readable: the code points, spelled in hex
        ("___", "arg", "arg_5f_5f_5f"),
        ("!@#$%^&*", "tool", "tool_21_40_23_24_25_5e"),  # the first six only
    ],
)
def test_to_identifier(wire: str, prefix: str, expected: str) -> None:
    assert to_identifier(wire, prefix=prefix) == expected


def test_parameters_may_keep_builtin_names_but_not_keywords() -> None:
    assert to_identifier("id", prefix="arg", builtins_ok=True) == "id"
    assert to_identifier("id", prefix="arg") == "id_"
    assert to_identifier("from", prefix="arg", builtins_ok=True) == "from_"


def test_reserved_names_get_underscores_until_free() -> None:
    assert to_identifier("results", prefix="tool", reserved={"results"}) == "results_"
    assert to_identifier("results", prefix="tool", reserved={"results", "results_"}) == "results__"
    assert to_identifier("self", prefix="arg", reserved={"self"}, builtins_ok=True) == "self_"


def test_unique_numbers_from_two_and_skips_taken_numbers() -> None:
    used = {"a", "a_2"}
    assert unique("a", used) == "a_3"
    assert unique("b", used) == "b"
    assert unique("b", used) == "b_2"
    assert used == {"a", "a_2", "a_3", "b", "b_2"}


def test_assign_names_numbers_collisions_in_sorted_wire_order() -> None:
    # rule 5: sorted by code point: "-" < "." < "G" < "_"
    names = assign_names(["weatherGet", "weather.get", "weather_get", "weather-get"], prefix="tool")
    assert names == {
        "weather-get": "weather_get",
        "weather.get": "weather_get_2",
        "weatherGet": "weather_get_3",
        "weather_get": "weather_get_4",
    }
    assert list(names) == ["weather-get", "weather.get", "weatherGet", "weather_get"]


def test_assign_names_respects_reserved_and_builtins() -> None:
    assert assign_names(["with_options", "results", "list"], prefix="tool", reserved={"results", "with_options"}) == {
        "list": "list_",
        "results": "results_",
        "with_options": "with_options_",
    }
    assert assign_names(["id", "self", "id"], prefix="arg", reserved={"self"}, builtins_ok=True) == {
        "id": "id",
        "self": "self_",
    }


def test_a_reserved_name_is_never_handed_out() -> None:
    # "x_" is reserved, so to_identifier("x_") gives "x__"; "x" must not become "x_" either.
    assert assign_names(["x_", "x"], prefix="arg", reserved={"x_"}) == {"x": "x", "x_": "x__"}


@pytest.mark.parametrize(
    ("text", "suffix", "expected"),
    [
        ("get_weather", "Output", "GetWeatherOutput"),
        ("search-docs", "", "SearchDocs"),
        ("getHTTPStatus", "", "GetHttpStatus"),
        ("__", "Input", "ToolInput"),
        ("", "", "Tool"),
        ("3d-model", "", "T3dModel"),
        ("a__b", "", "AB"),
    ],
)
def test_class_name(text: str, suffix: str, expected: str) -> None:
    assert class_name(text, suffix=suffix) == expected
    if not suffix:
        assert class_name(text) == expected


@given(st.lists(st.text(max_size=12), max_size=12))
def test_assigned_names_are_unique_identifiers_and_never_keywords(wires: list[str]) -> None:
    names = assign_names(wires, prefix="tool", reserved={"results"})
    assert set(names) == set(wires)
    assert len(set(names.values())) == len(names)
    for name in names.values():
        assert name.isidentifier() and name.isascii() and not keyword.iskeyword(name)
        assert not name.startswith("_") and name != "results"
