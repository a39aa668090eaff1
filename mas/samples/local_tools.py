"""A sample in-process tool: a ``ToolContract`` subclass served by ``LocalToolRegistry``.

Try it: ``python -m mas.runtime list --local mas.samples.local_tools:WordCount``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mas.runtime.contracts.tool_contract import ToolContract

__all__ = ["WordCount"]


class WordCount(ToolContract):
    """Count the words, lines and characters of a text."""

    name: ClassVar[str] = "word_count"
    description: ClassVar[str] = "Count the words, lines and characters of a text."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "The text to measure."}},
        "required": ["text"],
        "additionalProperties": False,
    }
    title: ClassVar[str | None] = "Word count"
    output_schema: ClassVar[dict[str, Any] | None] = {
        "type": "object",
        "properties": {"words": {"type": "integer"}, "lines": {"type": "integer"}, "characters": {"type": "integer"}},
        "required": ["words", "lines", "characters"],
    }
    read_only: ClassVar[bool | None] = True
    idempotent: ClassVar[bool | None] = True

    def execute(self, **kwargs: Any) -> dict[str, int]:
        text: str = kwargs["text"]
        return {"words": len(text.split()), "lines": len(text.splitlines()), "characters": len(text)}
