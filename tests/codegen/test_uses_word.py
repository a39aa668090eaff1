"""The shim-import scan (`_uses_word`) answers exactly as the word-boundary regex it replaced."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from codegen.build import _uses_word

WORDS = st.sampled_from(["_ToolInfo", "_ToolOutput", "_ToolsBase", "_CallOptions"])
PIECES = st.lists(st.sampled_from(["_ToolInfo", "_ToolOutput", "_ToolsBase", "x", "_", "é", " ", "[", "\n", "9"]))


@example(text="_ToolsBaseX _ToolsBase", word="_ToolsBase")
@example(text="a_ToolInfo", word="_ToolInfo")
@example(text="_ToolInfo", word="_ToolInfo")
@given(text=PIECES.map("".join) | st.text(), word=WORDS)
def test_uses_word_is_the_word_boundary_search(text: str, word: str) -> None:
    assert _uses_word(text, word) == bool(re.search(rf"\b{word}\b", text))
