"""A sample in-process source of resources, a template and a prompt: a ``LocalServer`` subclass.

Try it: ``python -m mas.runtime list --local mas.samples.local_docs:Notes``. Its ``add_note``
method changes ``notes://index`` and tells its subscriptions (``notify_updated``).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, ClassVar

from mas.runtime.local_server import LocalServer

__all__ = ["Notes"]


class Notes(LocalServer):
    """Notes kept in memory: an index (JSON), one note per URI, and a prompt that summarises one."""

    name: ClassVar[str] = "notes"
    resources: ClassVar[tuple[dict[str, Any], ...]] = (
        {"uri": "notes://index", "name": "index", "mimeType": "application/json", "description": "Every note's id."},
        {"uri": "notes://readme", "name": "readme", "mimeType": "text/markdown", "description": "What this is."},
    )
    resource_templates: ClassVar[tuple[dict[str, Any], ...]] = (
        {"uriTemplate": "notes://note/{id}", "name": "note", "mimeType": "text/plain", "description": "One note."},
    )
    prompts: ClassVar[tuple[dict[str, Any], ...]] = (
        {
            "name": "summarise_note",
            "description": "Ask for a summary of one note.",
            "arguments": [
                {"name": "id", "description": "The note's id.", "required": True},
                {"name": "words", "description": "At most this many words.", "required": False},
            ],
        },
    )

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._notes: dict[str, str] = {"welcome": "Notes live in memory; add_note() adds one."}

    def add_note(self, note_id: str, text: str) -> None:
        with self._lock:
            self._notes[note_id] = text
        self.notify_updated("notes://index")

    def read(self, uri: str) -> Any:
        if uri == "notes://index":
            with self._lock:
                return {"ids": sorted(self._notes)}
        if uri == "notes://readme":
            return "# Notes\n\nAn in-process source: `notes://note/{id}` reads one note.\n"
        with self._lock:
            return self._notes[uri.removeprefix("notes://note/")]  # a KeyError is "unknown_tool"

    def prompt(self, name: str, arguments: Mapping[str, str]) -> Any:
        with self._lock:
            text = self._notes[arguments["id"]]
        limit = arguments.get("words", "20")
        return f"Summarise this note in at most {limit} words:\n\n{text}"

    def completions(self, ref: Mapping[str, Any], argument: str, value: str) -> list[str]:
        if argument != "id":
            return []
        with self._lock:
            return [n for n in sorted(self._notes) if n.startswith(value)]
