"""Handlers for the sample skill tools in ``library-samples/tools/`` (named by ``spec.handler``).

All offline and deterministic: ``web_search`` searches a small built-in corpus, and
``current_time`` is reproducible when given an instant (``at``).
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime, timedelta, tzinfo
from datetime import timezone as fixed_offset  # `timezone` is a tool argument name below
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["current_time", "summarize_text", "unit_convert", "web_search"]

# (title, url, snippet): a fixed corpus standing in for the web.
_CORPUS: tuple[tuple[str, str, str], ...] = (
    (
        "Model Context Protocol overview",
        "https://example.org/mcp/overview",
        "MCP lets an application list and call tools on remote servers over stdio or HTTP.",
    ),
    (
        "Pagination of tools/list results",
        "https://example.org/mcp/pagination",
        "A server returns a next cursor; the client repeats tools/list with that cursor until none is left.",
    ),
    (
        "JSON Schema for tool parameters",
        "https://example.org/json-schema/tools",
        "Tool arguments are described with a JSON Schema object: properties, required and types.",
    ),
    (
        "Writing Python tool handlers",
        "https://example.org/python/handlers",
        "A handler is a plain Python function; its keyword arguments are the tool arguments.",
    ),
    (
        "Time zones in Python",
        "https://example.org/python/zoneinfo",
        "The zoneinfo module maps IANA time zone names such as Europe/Paris to UTC offsets.",
    ),
    (
        "Metric and imperial units",
        "https://example.org/units",
        "One mile is 1.609344 kilometres; one pound is 0.45359237 kilograms.",
    ),
)

_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def web_search(query: str, max_results: int = 3) -> dict[str, Any]:
    """Rank the corpus by how many query words each entry contains (title words count double)."""
    terms = set(_words(query))
    scored = []
    for position, (title, url, snippet) in enumerate(_CORPUS):
        score = 2 * len(terms & set(_words(title))) + len(terms & set(_words(snippet)))
        if score:
            scored.append((-score, position, {"title": title, "url": url, "snippet": snippet, "score": score}))
    results = [hit for _, _, hit in sorted(scored, key=lambda item: (item[0], item[1]))[:max_results]]
    return {"query": query, "results": results}


_STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were will with".split()
)


def summarize_text(text: str, max_sentences: int = 2) -> str:
    """Extractive summary: the sentences with the most frequent content words, in their original order."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()]
    if len(sentences) <= max_sentences:
        return " ".join(sentences)
    frequency = Counter(w for w in _words(text) if w not in _STOPWORDS)

    def weight(index: int) -> tuple[float, int]:
        words = [w for w in _words(sentences[index]) if w not in _STOPWORDS]
        return (-sum(frequency[w] for w in words) / (len(words) or 1), index)

    chosen = sorted(sorted(range(len(sentences)), key=weight)[:max_sentences])
    return " ".join(sentences[i] for i in chosen)


# unit -> (category, factor to the category's base unit: metre, kilogram, litre)
_UNITS: dict[str, tuple[str, float]] = {
    "mm": ("length", 0.001),
    "cm": ("length", 0.01),
    "m": ("length", 1.0),
    "km": ("length", 1000.0),
    "in": ("length", 0.0254),
    "ft": ("length", 0.3048),
    "mi": ("length", 1609.344),
    "g": ("mass", 0.001),
    "kg": ("mass", 1.0),
    "lb": ("mass", 0.45359237),
    "oz": ("mass", 0.028349523125),
    "ml": ("volume", 0.001),
    "l": ("volume", 1.0),
    "gal": ("volume", 3.785411784),
}
_TEMPERATURES = {"C", "F", "K"}


def _to_celsius(value: float, unit: str) -> float:
    return {"C": value, "F": (value - 32) * 5 / 9, "K": value - 273.15}[unit]


def _from_celsius(value: float, unit: str) -> float:
    return {"C": value, "F": value * 9 / 5 + 32, "K": value + 273.15}[unit]


def unit_convert(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Convert between units of one category (length, mass, volume, temperature)."""
    if from_unit in _TEMPERATURES and to_unit in _TEMPERATURES:
        converted, category = _from_celsius(_to_celsius(value, from_unit), to_unit), "temperature"
    elif from_unit in _UNITS and to_unit in _UNITS and _UNITS[from_unit][0] == _UNITS[to_unit][0]:
        category = _UNITS[from_unit][0]
        converted = value * _UNITS[from_unit][1] / _UNITS[to_unit][1]
    else:
        raise ValueError(f"cannot convert {from_unit!r} to {to_unit!r}")
    return {"value": round(converted, 6), "unit": to_unit, "category": category}


_OFFSET = re.compile(r"^([+-])(\d{2}):(\d{2})$")


def _zone(name: str) -> tzinfo:
    if name.upper() == "UTC":
        return UTC
    match = _OFFSET.match(name)
    if match:
        sign = -1 if match.group(1) == "-" else 1
        return fixed_offset(sign * timedelta(hours=int(match.group(2)), minutes=int(match.group(3))))
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r} (use an IANA name, UTC or +HH:MM)") from None


async def current_time(timezone: str = "UTC", at: str | None = None) -> dict[str, Any]:
    """The time in ``timezone`` now, or at the instant ``at`` (ISO 8601; naive means UTC).

    A coroutine on purpose: the sample shows that async handlers work unchanged.
    """
    zone = _zone(timezone)
    instant = datetime.now(UTC) if at is None else datetime.fromisoformat(at)
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    local = instant.astimezone(zone)
    offset = local.strftime("%z")
    return {
        "iso": local.isoformat(),
        "timezone": timezone,
        "utc_offset": f"{offset[:3]}:{offset[3:]}",
        "weekday": local.strftime("%A"),
    }
