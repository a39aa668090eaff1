"""Untrusted text becomes Python literals only: each helper checked against hand-written output."""

from __future__ import annotations

import ast
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen.literals import clean_text, docstring_literal, json_default_literal, str_literal, wire_literal


def test_clean_text_normalises_newlines_tabs_and_drops_invisible_characters() -> None:
    assert clean_text("a\r\nb\rc\td") == "a\nb\nc    d"
    # bidi override, zero-width space's cousin (format), NUL, line and paragraph separators
    assert clean_text("x\u202ey\u200dz\x00\u2028\u2029!") == "xyz!"
    assert clean_text("keep é 中 ✓ \n") == "keep é 中 ✓ \n"


def test_str_literal_is_a_cleaned_double_quoted_literal() -> None:
    assert str_literal(None) == "None"
    assert str_literal('say "hi"\u202e') == "'say \"hi\"'"
    assert str_literal("a\tb") == '"a    b"'
    assert ast.literal_eval(str_literal('x"; import os; "')) == 'x"; import os; "'


def test_wire_literal_keeps_every_character() -> None:
    wire = "weird\u202ename\n\x00"
    assert ast.literal_eval(wire_literal(wire)) == wire


@pytest.mark.parametrize(
    ("text", "indent", "expected"),
    [
        ("Get the weather.", 8, '"""Get the weather."""'),
        ("", 8, '"""(no description)"""'),
        ("  \n\n  ", 4, '"""(no description)"""'),
        ('Ends with a quote "x"', 4, '"""Ends with a quote "x" """'),  # only a quote before a quote is escaped
        ('"""; import os; """', 4, '"""\\"\\""; import os; \\"\\"" """'),
        ("back\\slash", 4, '"""back\\\\slash"""'),
        ("\n\n  First line.  \n", 4, '"""First line."""'),
        (
            "First.\n\n    Indented more.\n  Less.\n\n",
            8,
            '"""First.\n\n          Indented more.\n        Less.\n        """',
        ),
        ("One.\nTwo.\t", 4, '"""One.\n    Two.\n    """'),
    ],
)
def test_docstring_literal(text: str, indent: int, expected: str) -> None:
    assert docstring_literal(text, indent) == expected


def test_docstring_literal_falls_back_to_a_plain_literal_when_the_check_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(text: str) -> object:
        raise SyntaxError("pretend the escaping went wrong")

    monkeypatch.setattr("codegen.literals.ast.literal_eval", broken)
    assert docstring_literal("First.\n  Second.", 4) == '"First.\\nSecond."'


@given(st.text(max_size=60), st.sampled_from([0, 4, 8]))
def test_docstring_literal_is_always_one_literal(text: str, indent: int) -> None:
    literal = docstring_literal(text, indent)
    tree = ast.parse(literal)
    assert len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr)
    assert isinstance(tree.body[0].value, ast.Constant) and isinstance(tree.body[0].value.value, str)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("celsius", '"celsius"'),
        ('say "x"', "'say \"x\"'"),
        ("tab\there", None),  # would have to be altered to print: no default
        ("bidi\u202e", None),
        (None, "None"),
        (True, "True"),
        (False, "False"),
        (0, "0"),
        (-7, "-7"),
        (2.5, "2.5"),
        (math.inf, None),
        (math.nan, None),
        ([1], None),
        ({"a": 1}, None),
    ],
)
def test_json_default_literal(value: object, expected: str | None) -> None:
    assert json_default_literal(value) == expected


@given(st.text(alphabet=st.characters(max_codepoint=0x7F)) | st.text())
def test_clean_text_drops_exactly_the_invisible_characters(text: str) -> None:
    """The ASCII fast path and the general path both follow the one definition."""
    import unicodedata

    from codegen.literals import INVISIBLE_CATEGORIES

    normal = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    expected = "".join(c for c in normal if c == "\n" or unicodedata.category(c) not in INVISIBLE_CATEGORIES)
    assert clean_text(text) == expected


@settings(deadline=None)  # the first example imports black: 300 ms on a loaded machine
@given(st.text(alphabet=st.sampled_from(["a", "'", '"', "\\", "\n", "é", "\x00", "\u202e"]), max_size=12) | st.text())
def test_wire_literal_prefers_double_quotes_as_black_does(value: str) -> None:
    """Quotes as the formatters choose them (double unless that takes more escapes), so a literal
    reads the same in a formatted module and in a code-mode stub, which is not formatted."""
    from black.strings import normalize_string_quotes

    assert wire_literal(value) == normalize_string_quotes(repr(value))
    assert ast.literal_eval(wire_literal(value)) == value


def test_docstring_text_cannot_close_the_docstring() -> None:
    from codegen.literals import docstring_text

    for name in ('a"""b', "x\\", 'q"', "two\nlines"):
        doc = f'"""Tools of the {docstring_text(repr(name))} source."""'
        assert ast.literal_eval(doc) == f"Tools of the {' '.join(repr(name).split(chr(10)))} source."
