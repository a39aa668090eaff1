"""The one place that blanks secrets out of everything that leaves the process or reaches a file.

A secret is a value resolved at run time that the user never wrote down: an ``env:VAR`` header
value, a credential-like literal header, an OAuth token. Whoever resolves one calls
:func:`remember`; from then on, for the life of the process, :func:`blank` and :func:`blank_json`
replace it with ``***`` wherever it appears, however it got there (a server may echo a header
into a tool description, a default, a progress message, an error or a result).

Applied at every exit (``docs/security.md`` lists them with their tests): tool listings as the MCP
provider fetches them (so the lock, the generated package and ``mas-runtime list --json`` never see
a secret), results and error envelopes, progress messages, the samples file, the lock writer, the
CLIs' stdout and every log line the CLIs print (``-v`` tracebacks included).

The set is process-wide on purpose: a value resolved for one server is blanked in another's
output too, and code that writes a file does not need to know which provider a value came from.

A server may also echo a secret encoded (:func:`encodings`): base64 (standard and URL-safe, with
or without padding, and inside the base64 of a longer text such as ``Bearer <token>`` or
``user:<password>``), percent-encoded (``%2F`` and ``%2f``, ``+`` for spaces) and JSON-escaped.
Each remembered secret is blanked in all these spellings too.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TextIO
from urllib.parse import quote, quote_plus

__all__ = [
    "MASK",
    "BlankingFormatter",
    "any_secret",
    "blank",
    "blank_json",
    "blanked_output",
    "encodings",
    "known",
    "remember",
]

#: What a secret is replaced with.
MASK = "***"

_KNOWN: set[str] = set()
_LOCK = threading.Lock()
# Every spelling of every secret, longest first, so a secret containing another is blanked
# whole; rebuilt when the set grows. _RAW: the secrets as resolved (for pieces cut short).
_ORDERED: tuple[str, ...] = ()
_RAW: tuple[str, ...] = ()

#: The shortest base64 run blanked as a piece of an encoded secret (shorter ones would match by chance).
MIN_ENCODED = 8
_URLSAFE = str.maketrans("+/", "-_")
_HEX_ESCAPE = re.compile(r"%[0-9A-F]{2}")


def encodings(secret: str) -> frozenset[str]:
    """The spellings of ``secret`` a server may echo besides the secret itself.

    Base64 runs are taken at each of the three alignments a secret can have inside a longer
    encoded text: the run whose characters depend on the secret's bytes alone (up to two
    characters at each end of such a run depend on its neighbours too and stay visible); the
    whole encoding, padding included, is one spelling of its own.
    """
    raw = secret.encode("utf-8")
    found: set[str] = set()
    whole = base64.b64encode(raw).decode("ascii")
    for spelled in (whole, whole.rstrip("=")):
        found.update((spelled, spelled.translate(_URLSAFE)))
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii")
        total = shift + len(raw)
        start = -(-8 * shift // 6)  # characters that also carry bits of the bytes before
        end = 4 * (total // 3) + 8 * (total % 3) // 6  # ... and of the bytes after
        run = encoded[start:end]
        if len(run) >= MIN_ENCODED:
            found.update((run, run.translate(_URLSAFE)))
    for escaped in (quote(secret, safe=""), quote_plus(secret, safe="")):
        found.update((escaped, _HEX_ESCAPE.sub(lambda m: m.group().lower(), escaped)))
    for dumped in (json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]):
        found.update((dumped, dumped.replace("/", "\\/")))
    found.discard(secret)
    return frozenset(value for value in found if len(value) >= min(len(secret), MIN_ENCODED))


def _spellings(values: Iterable[str]) -> tuple[str, ...]:
    out: set[str] = set()
    for value in values:
        out.add(value)
        out.update(encodings(value))
    return tuple(sorted(out, key=len, reverse=True))


def remember(values: Iterable[str]) -> None:
    """Blank ``values`` from now on, in every output of this process. Empty strings are ignored."""
    global _ORDERED, _RAW
    fresh = {value for value in values if value} - _KNOWN
    if not fresh:
        return
    with _LOCK:
        _KNOWN.update(fresh)
        _ORDERED = _spellings(_KNOWN)
        _RAW = tuple(sorted(_KNOWN, key=len, reverse=True))


def known() -> frozenset[str]:
    """The secrets remembered so far (for tests and diagnostics; never print them)."""
    return frozenset(_KNOWN)


def any_secret(extra: Iterable[str] = ()) -> bool:
    """Whether there is anything to blank: a remembered secret, or a non-empty one in ``extra``."""
    return bool(_ORDERED) or any(extra)


def _ordered(extra: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Every spelling to blank, and the secrets themselves (for pieces), with ``extra``."""
    more = [value for value in extra if value and value not in _KNOWN]
    if not more:
        return _ORDERED, _RAW
    return _spellings({*_KNOWN, *more}), tuple(sorted({*_RAW, *more}, key=len, reverse=True))


#: The shortest piece of a secret blanked where a value was cut short with "...".
MIN_PIECE = 6


def _blank(text: str, secrets: tuple[tuple[str, ...], tuple[str, ...]]) -> str:
    spellings, raw = secrets
    for secret in spellings:
        if secret in text:
            text = text.replace(secret, MASK)
    if "..." in text:
        text = _blank_pieces(text, raw)
    return text


def _blank_pieces(text: str, secrets: tuple[str, ...]) -> str:
    """Secrets cut short: pydantic (and reprlib) shorten a long value to ``head...tail``, and a
    cut through a secret leaves its start before the dots or its end after them."""
    for secret in secrets:
        for size in range(len(secret) - 1, MIN_PIECE - 1, -1):
            tail, head = "..." + secret[-size:], secret[:size] + "..."
            if tail in text:
                text = text.replace(tail, "..." + MASK)
            if head in text:
                text = text.replace(head, MASK + "...")
    return text


def blank(text: str, extra: Iterable[str] = ()) -> str:
    """``text`` with every remembered secret (and each of ``extra``) replaced by ``***``."""
    secrets = _ordered(extra)
    return _blank(text, secrets) if secrets[0] else text


def blank_json(value: Any, extra: Iterable[str] = ()) -> Any:
    """A JSON-like value with secrets blanked out of every string, keys included.

    Returns ``value`` itself when there is nothing to blank, else a copy (mappings become dicts,
    tuples lists). Walks with an explicit stack: a hostile value may be nested deeper than
    Python's recursion limit.
    """
    secrets = _ordered(extra)
    if not secrets[0]:
        return value
    return _copy(value, secrets)


def _copy(value: Any, secrets: tuple[tuple[str, ...], tuple[str, ...]]) -> Any:
    def convert(item: Any) -> tuple[Any, bool]:
        """The blanked scalar, or a fresh empty container to fill (and True)."""
        if isinstance(item, str):
            return _blank(item, secrets), False
        if isinstance(item, Mapping):
            return {}, True
        if isinstance(item, list | tuple):
            return [], True
        return item, False

    root, container = convert(value)
    stack: list[tuple[Any, Any]] = [(value, root)] if container else []
    while stack:
        source, target = stack.pop()
        if isinstance(target, dict):
            for key, item in source.items():
                out, nested = convert(item)
                target[_blank(str(key), secrets)] = out
                if nested:
                    stack.append((item, out))
        else:
            for item in source:
                out, nested = convert(item)
                target.append(out)
                if nested:
                    stack.append((item, out))
    return root


class BlankingFormatter(logging.Formatter):
    """Formats with ``inner`` and blanks the whole line, traceback included."""

    def __init__(self, inner: logging.Formatter) -> None:
        super().__init__()
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        return blank(self.inner.format(record))


class _BlankingStream:
    """A text stream that blanks secrets out of everything written to it (``blanked_output``)."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(blank(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, buffer, ...
        return getattr(self._inner, name)


@contextmanager
def blanked_output() -> Iterator[None]:
    """While active, ``sys.stdout`` and ``sys.stderr`` blank every remembered secret: the CLIs run
    their commands inside it, so no print, progress line or log line of theirs can carry one."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _BlankingStream(saved[0]), _BlankingStream(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
