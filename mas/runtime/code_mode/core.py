"""Code mode: agents write Python against a generated package's tools; it is type-checked against
the package's code-mode stubs, then run in a sandbox whose only way out is ``call_tool``.

    mode = CodeMode(registry, package="sample_tools")
    mode.api()                      # the stubs, for the model's context
    mode.search("weather")          # the stubs of the best-matching tools only
    mode.check(code)                # [Diagnostic(line, column, code, message), ...] (nothing sent)
    mode.run(code).value            # checked first; nothing is sent when the check fails

The sandbox is pydantic-monty: a Python interpreter in worker processes with limits on time,
memory and host round trips, with ty inside to type-check a snippet against ``.pyi`` stubs before
it runs. The sandbox has no file system, network, subprocess or environment: every OS call it
makes comes back to this host, which answers only module imports (``resume_not_handled`` leaves
the rest to Monty's error). Each stub function is a host function that calls the package's typed
method (``Tools(provider).results.<module>.<function>``), so the call goes through
``provider.call_tool(wire_name, arguments)`` exactly as the generated methods do: pinning,
retries, confirmation, timeouts and secret blanking apply unchanged, and secrets never enter the
sandbox (it only ever sees results). A source's resources, templates and prompts come the same
way, as a second, closed kind of host function (``tools.<module>.resources.<method>``,
``tools.<module>.prompts.<method>``, listed by the manifest's ``SURFACE``): each calls the package's
typed method, whose one path out is the provider's ``read_resource`` / ``get_prompt``.
``docs/code-mode.md`` describes the whole.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.resources
import json
import math
import os
import re
import signal
import textwrap
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, cast

from mas.runtime.contracts import _rules
from mas.runtime.contracts._rules import one_line, run_sync
from mas.runtime.contracts.tool_contract import CANCEL_POLL_SECONDS, invoke_call_tool, validate_arguments

__all__ = [
    "DEFAULT_MAX_CONCURRENT_RUNS",
    "DEFAULT_MAX_MEMORY_BYTES",
    "DEFAULT_MAX_OUTPUT_CHARS",
    "DEFAULT_MAX_PARALLEL_CALLS",
    "DEFAULT_MAX_QUEUE_SECONDS",
    "DEFAULT_MAX_QUEUED_RUNS",
    "DEFAULT_MAX_TOOL_CALLS",
    "DEFAULT_MAX_VALUE_CHARS",
    "DEFAULT_TIMEOUT_SECONDS",
    "MAX_NESTING",
    "PlannedCall",
    "SANDBOX_PACKAGE",
    "CodeMode",
    "CodeRun",
    "Diagnostic",
    "RunError",
    "ToolCall",
]

#: Limits of one ``run`` (docs/code-mode.md "Limits").
DEFAULT_TIMEOUT_SECONDS = 30.0
DEFAULT_MAX_TOOL_CALLS = 100
DEFAULT_MAX_MEMORY_BYTES = 128 * 1024 * 1024
#: Printed output kept per run; the rest is counted and cut, with a note at the end of the output.
DEFAULT_MAX_OUTPUT_CHARS = 20_000
#: The last expression's value, as JSON text, at most this long; a longer one stops the run ("output").
DEFAULT_MAX_VALUE_CHARS = 20_000
#: Limits of one ``CodeMode`` shared by its callers (docs/code-mode.md "Limits"): runs executing
#: at once (one more sandbox worker keeps the checker warm), how long and how many runs may wait
#: for a turn (past either: "busy"), and the gathered calls one run keeps in flight at once.
DEFAULT_MAX_CONCURRENT_RUNS = 4
DEFAULT_MAX_QUEUE_SECONDS = 10.0
DEFAULT_MAX_QUEUED_RUNS = 32
DEFAULT_MAX_PARALLEL_CALLS = 8
#: How deep a tool call's arguments and the run's value may nest (lists and dicts), as JSON.
MAX_NESTING = 100
#: Seconds past the deadline (or a cancellation) the host waits for the sandbox to stop on its own
#: before it kills the worker process.
_KILL_GRACE_SECONDS = 0.5
#: Host round trips (imports, sleeps, futures) a run may make besides its tool calls: a backstop
#: only, the time limit ends such a loop long before.
_ROUND_TRIPS = 100_000
#: The package the sandbox imports the tool modules from: ``from tools import sample``.
SANDBOX_PACKAGE = "tools"
# check() puts an import of this (empty) module on a line of its own in front of the snippet: the
# checker runs before the first statement, and the import is the first statement, so the host
# stops the sandbox there and no line of the snippet ever runs. Diagnostics move up one line.
_BARRIER = "_toolgen_check_only"
#: The kind a failed call carries in the sandbox, by the package's exception class name.
_KINDS = {
    "ToolCallError": "tool_error",
    "ToolArgumentsError": "invalid_arguments",
    "ToolNotFoundError": "unknown_tool",
    "ToolTimeoutError": "timeout",
    "ToolCancelledError": "cancelled",
    "ToolUnavailableError": "unavailable",
    "ToolProtocolError": "protocol",
    "ToolInputRequiredError": "input_required",
    "ToolOutputValidationError": "invalid_output",
}
#: What every sandbox module adds to its stub: the names of its functions (``tools.MODULES`` the modules').
_NAMES_STUB = "\nFUNCTIONS: list[str]\n"
_HEADER = "# Generated by toolgen"
_PREAMBLE = """\
# Python tools API. `from tools import <module>`, then `await <module>.<function>(...)`
# (keyword arguments only; asyncio.gather runs calls concurrently; `tools.MODULES` and
# `<module>.FUNCTIONS` list the names). The last expression is the
# result; print() output is kept. A failed call raises RuntimeError("<kind>: <message>"), kind one of
# tool_error, invalid_arguments, unknown_tool, timeout, cancelled, unavailable, protocol,
# input_required, invalid_output. A result typed `str` is the tool's text. No files, network,
# processes or environment variables.
"""
#: Added to the preamble when some module serves resources or prompts (the others' API is unchanged).
_SURFACE_PREAMBLE = """\
# `<module>.resources.<name>(...)` reads a resource (a template's variables are its keyword
# arguments; text comes back as str, JSON as its value, a blob as bytes) and
# `<module>.prompts.<name>(...)` gets a prompt; each counts as one call, and fails as tool calls do.
"""
#: The attributes of a sandbox module that hold its resources and prompts (the manifest's ``SURFACE``).
_SURFACE_ATTRS = ("resources", "prompts")


@dataclass(frozen=True)
class Diagnostic:
    """One problem the checker found; ``line`` and ``column`` count from 1 in the snippet."""

    line: int
    column: int
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.line}:{self.column}: {self.code}: {self.message}"


@dataclass(frozen=True)
class ToolCall:
    """One tool call the snippet made: what reached ``call_tool``, how long it took, how it failed."""

    function: str  # tools.<module>.<function>
    wire_name: str
    arguments: dict[str, Any]
    seconds: float
    error: str | None = None  # the failure's kind; None when the call succeeded


@dataclass(frozen=True)
class PlannedCall:
    """One tool call a snippet can make, found by reading it (nothing runs): where, which tool,
    what its hints say, and whether it sits inside a loop or comprehension (so it may repeat)."""

    line: int
    function: str  # tools.<module>.<function>
    wire_name: str
    read_only: bool | None
    destructive: bool | None
    idempotent: bool | None
    in_loop: bool

    @property
    def risky(self) -> bool:
        """Destructive (or not known to be read-only) and not idempotent: repeating it may harm."""
        return bool(self.destructive) or (self.read_only is not True and self.idempotent is not True)

    def __str__(self) -> str:
        said = [w for w, on in (("read-only", self.read_only), ("destructive", self.destructive),
                                ("idempotent", self.idempotent)) if on]  # fmt: skip
        loop = ", inside a loop" if self.in_loop else ""
        return f"line {self.line}: {self.function} ({', '.join(said) or 'no hints'}{loop})"


@dataclass(frozen=True)
class RunError:
    """What stopped a run: ``kind`` is ``check`` (diagnostics; nothing ran), ``busy`` (no turn
    within the queue's bounds; nothing ran), ``cancelled`` (its ``cancel_event``), ``timeout``,
    ``memory``, ``tool_calls`` (more than ``max_tool_calls``), ``output`` (the value over
    ``max_value_chars``), ``value`` (the value is not JSON), ``exception`` (the snippet raised), or
    ``sandbox`` (the worker failed)."""

    kind: str
    message: str
    diagnostics: tuple[Diagnostic, ...] = ()

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass
class CodeRun:
    """The outcome of ``CodeMode.run``: the last expression's value, the printed output, every
    tool call in order of sending, and the error that stopped it (None when it completed)."""

    value: Any = None
    output: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    error: RunError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class _Tool:
    module: str
    function: str
    wire_name: str
    title: str
    description: str
    stub: str  # the function's text in the stub (its whole docstring: description, parameters)
    needs: tuple[str, ...]  # the classes of its module it names, in module order
    brief: str = ""  # the signature and the docstring's first line
    line: str = ""  # the docstring's first line
    hints: tuple[bool | None, bool | None, bool | None] = (None, None, None)  # read-only, destructive, idempotent
    #: "tool", or how a resource's or prompt's value is handed over ("text", "json", "blob", "prompt")
    kind: str = "tool"


class _Stopped(Exception):
    """Ends a run from the host (a limit); the sandbox is abandoned where it is."""

    def __init__(self, error: RunError) -> None:
        super().__init__(error.message)
        self.error = error


def _load_package(package: str | ModuleType) -> ModuleType:
    module = importlib.import_module(package) if isinstance(package, str) else package
    return module


class CodeMode:
    """Code mode over ``provider`` (anything with ``call_tool``, like the generated ``Tools`` take)
    for the generated ``package`` (its import name or the module)."""

    def __init__(
        self,
        provider: Any,
        *,
        package: str | ModuleType,
        max_concurrent_runs: int = DEFAULT_MAX_CONCURRENT_RUNS,
        max_queue_seconds: float = DEFAULT_MAX_QUEUE_SECONDS,
        max_queued_runs: int = DEFAULT_MAX_QUEUED_RUNS,
        max_parallel_calls: int = DEFAULT_MAX_PARALLEL_CALLS,
        reachable: Callable[[str], bool] | None = None,
        confirm: Callable[[Any, dict[str, Any]], object] | None = None,
    ) -> None:
        if max_concurrent_runs < 1 or max_parallel_calls < 1 or max_queue_seconds < 0 or max_queued_runs < 0:
            raise ValueError(
                "max_concurrent_runs and max_parallel_calls must be at least 1, "
                "max_queue_seconds and max_queued_runs not negative"
            )
        self._package = _load_package(package)
        name = self._package.__name__
        try:
            manifest = importlib.import_module(f"{name}.code_mode")
        except ImportError as exc:
            raise ValueError(f"package {name!r} has no code-mode stubs; regenerate it with this toolgen") from exc
        modules: Mapping[str, Mapping[str, str]] = manifest.MODULES
        self._attrs: Mapping[str, str] = manifest.NAMESPACES
        folder = importlib.resources.files(f"{name}.code_mode")
        self._stubs = {m: _strip_header(folder.joinpath(f"{m}.pyi").read_text(encoding="utf-8")) for m in modules}
        infos = self._package.TOOLS
        # The second kind of host function: a closed table written by the generator (never a
        # name a server sends at run time), module -> "resources.<method>" -> how its value is handed over.
        surface: Mapping[str, Mapping[str, str]] = getattr(manifest, "SURFACE", {})
        self._tools: dict[str, _Tool] = {}
        self._classes: dict[str, dict[str, str]] = {}
        self._holders: dict[str, dict[str, str]] = {}  # module -> "resources" -> its class in the stub
        for module, functions in modules.items():
            classes, defs, holders = _split_stub(self._stubs[module])
            self._classes[module] = classes
            self._holders[module] = holders
            for function, wire in functions.items():
                info = infos[wire]
                text, needs, brief, line = defs[function]
                hints = (info.read_only, info.destructive, info.idempotent)
                self._tools[f"{module}.{function}"] = _Tool(
                    module, function, wire, info.title or "", info.description or "", text, needs, brief, line, hints
                )
            for function, kind in surface.get(module, {}).items():
                text, needs, brief, line = defs[function]
                self._tools[f"{module}.{function}"] = _Tool(
                    module, function, "", "", _docstring_of(text), text, needs, brief, line, (True, False, True), kind
                )
        self._modules = modules
        self._left_out: tuple[str, ...] = ()
        if reachable is not None:
            self._keep(reachable)
        self._provider = _sync_provider(provider)
        self._errors = tuple(
            (getattr(self._package, cls), kind) for cls, kind in _KINDS.items() if hasattr(self._package, cls)
        )
        self._lock = threading.Lock()
        self._gate = _Gate(max_concurrent_runs, max_queued_runs)
        self._watchdog = _Watchdog()
        self._max_queue_seconds = max_queue_seconds
        self._max_parallel_calls = max_parallel_calls
        # One bounded host pool for the tool calls of every run (each run keeps at most
        # max_parallel_calls of them in flight), created at the first call.
        self._calls: ThreadPoolExecutor | None = None
        self._params: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        # Each tool's input schema by wire name, read at the first call (None: not read yet).
        self._input_schemas: dict[str, Any] | None = None
        # The package's confirm= rule for every call from code: asked before a destructive tool
        # runs; a falsy answer refuses it (the call fails "cancelled", nothing is sent).
        self._confirm = confirm
        self._pool: Any = None
        self._check_session: Any = None
        self._index: _Index | None = None
        self._for_runs: dict[str, Any] | None = None
        self._finalizer: weakref.finalize[Any, CodeMode] | None = None

    def _keep(self, reachable: Callable[[str], bool]) -> None:
        """Serve only what can be called: a module none of whose wire names ``reachable`` routes
        is left out (``left_out`` names it), and so is each function it does not route."""
        kept: dict[str, Mapping[str, str]] = {}
        left = []
        for module, functions in self._modules.items():
            mine = {f: w for f, w in functions.items() if reachable(w)}
            if mine:
                kept[module] = mine
            else:
                left.append(module)
            for function in functions:
                if function not in mine:
                    del self._tools[f"{module}.{function}"]
            if not mine:  # its resources and prompts go with it
                for key in [k for k, t in self._tools.items() if t.module == module]:
                    del self._tools[key]
        self._modules = kept
        self._left_out = tuple(left)
        for module in left:
            del self._stubs[module]

    @property
    def left_out(self) -> tuple[str, ...]:
        """Modules of the package no server or tool directory behind the provider can answer."""
        return self._left_out

    @property
    def max_concurrent_runs(self) -> int:
        """Runs that execute at once; the others wait for a turn."""
        return self._gate.slots

    @property
    def max_queued_runs(self) -> int:
        """Runs that may wait for a turn at once; one more is refused ("busy") at once."""
        return self._gate.max_waiting

    @property
    def modules(self) -> Mapping[str, Mapping[str, str]]:
        """Sandbox module -> function -> the wire name it calls."""
        return self._modules

    # --- the API text ------------------------------------------------------------------------

    def api(self) -> str:
        """Every module's stub, brief: each function's signature and its docstring's first line
        (``stubs()`` and ``search()`` give the whole docstrings), for the model's context."""
        parts = [_PREAMBLE + (_SURFACE_PREAMBLE if any(t.kind != "tool" for t in self._tools.values()) else "")]
        for module in self._modules:
            parts.append(f"\n# module {SANDBOX_PACKAGE}.{module}: from {SANDBOX_PACKAGE} import {module}\n")
            parts.append(self._brief_stub(module))
        return "".join(parts)

    def _brief_stub(self, module: str) -> str:
        text = self._stubs[module]
        for tool in self._functions(module):
            text = text.replace(tool.stub, tool.brief, 1)
        return text

    def _functions(self, module: str) -> list[_Tool]:
        """A module's functions: its tools, then its resources and prompts."""
        return [t for t in self._tools.values() if t.module == module]

    def listing(self, module: str | None = None) -> str:
        """Step one of discovery: each module (``tools.<module>: N functions``) and, under it, each
        function with its docstring's first line, one line each; ``module`` for one module only."""
        if module is not None and module not in self._modules:
            return f"# no module {module!r}; the modules: {', '.join(self._modules)}\n"
        lines = []
        for name, functions in self._modules.items():
            if module is not None and name != module:
                continue
            mine = self._functions(name)
            served = sum(t.kind != "tool" for t in mine)
            also = f", {served} resource(s) and prompt(s)" if served else ""
            lines.append(f"{SANDBOX_PACKAGE}.{name}: {len(functions)} function(s){also}")
            lines += [f"  {t.function}: {t.line}" for t in mine]
        return "\n".join(lines) + "\n"

    def stubs(self, names: Sequence[str]) -> str:
        """Step two: the whole stubs (the types they need, every docstring) of the functions named
        as ``module.function``, ``function`` (every module's of that name) or ``module`` (all its
        functions); a line naming each name that matched nothing."""
        found: list[_Tool] = []
        missing = []
        for name in names:
            name = name.removeprefix(f"{SANDBOX_PACKAGE}.")
            hits = [t for key, t in self._tools.items() if name in _stub_names(key, t)]
            found += [t for t in hits if t not in found]
            if not hits:
                missing.append(name)
        text = self._render(found) if found else ""
        if missing:
            text += f"# no function or module named {', '.join(repr(m) for m in missing)}\n"
        return text

    def search(self, query: str, limit: int = 5, offset: int = 0) -> str:
        """The stubs of the ``limit`` tools that best match ``query`` (words of their names, titles
        and descriptions; BM25), brief as in ``api()``, from the ``offset``-th best on (paging),
        best first within each module; a line saying more match, or that none does."""
        if self._index is None:
            self._index = _Index(self._tools.values())
        ranked = self._index.search(query, offset + limit + 1)
        found = ranked[offset : offset + limit]
        if not found:
            more = f" past the first {offset}" if offset else ""
            return f"# no tool matches {query!r}{more}; try other words: what the tool does, or part of its name\n"
        text = self._render(found, brief=True)
        if len(ranked) > offset + limit:
            text += f"# more tools match: search again with offset={offset + limit}\n"
        return text + "# stubs by name (get_stubs) give each one's whole docstring: description, parameters\n"

    def _render(self, found: Sequence[_Tool], *, brief: bool = False) -> str:
        parts = []
        by_module: dict[str, list[_Tool]] = {}
        for tool in found:
            by_module.setdefault(tool.module, []).append(tool)
        for module, tools in by_module.items():
            classes = self._classes[module]
            needed = {n for t in tools for n in t.needs}
            parts.append(f"# module {SANDBOX_PACKAGE}.{module}: from {SANDBOX_PACKAGE} import {module}\n")
            body = [classes[n] for n in classes if n in needed]
            body += [t.brief if brief else t.stub for t in tools if t.kind == "tool"]
            for attr in _SURFACE_ATTRS:  # a resource or prompt inside its class, then the attribute
                served = [
                    t.brief if brief else t.stub
                    for t in tools
                    if t.kind != "tool" and t.function.startswith(f"{attr}.")
                ]
                if served:
                    holder = self._holders[module][attr]
                    body.append(f"class {holder}:\n" + "\n\n".join(served) + f"\n\n{attr}: {holder}")
            typing = _typing_line(self._stubs[module], "\n".join(body))
            parts.append((typing + "\n\n" if typing else "") + "\n\n".join(body) + "\n")
        return "\n".join(parts)

    # --- the effect plan ---------------------------------------------------------------------

    def plan(self, code: str) -> list[PlannedCall]:
        """Which tools ``code`` can call, read from its text (nothing runs, nothing is sent): each
        ``<module>.<function>(...)`` of a module imported from ``tools``, with the tool's hints and
        whether the call sits inside a loop or comprehension. Code that does not parse has none."""
        import ast

        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            return []
        modules: dict[str, str] = {}  # local name -> sandbox module
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == SANDBOX_PACKAGE:
                modules.update({a.asname or a.name: a.name for a in node.names if a.name in self._modules})
        loops = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
        found: list[PlannedCall] = []

        def visit(node: ast.AST, in_loop: bool) -> None:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                target, function = node.func.value, node.func.attr
                if isinstance(target, ast.Attribute) and target.attr in _SURFACE_ATTRS:  # sample.resources.guide
                    function = f"{target.attr}.{function}"
                    target = target.value
                if isinstance(target, ast.Name) and target.id in modules:
                    tool = self._tools.get(f"{modules[target.id]}.{function}")
                    if tool is not None:
                        found.append(PlannedCall(node.lineno, f"{SANDBOX_PACKAGE}.{tool.module}.{tool.function}",
                                                 tool.wire_name, *tool.hints, in_loop))  # fmt: skip
            for child in ast.iter_child_nodes(node):
                visit(child, in_loop or isinstance(node, loops))

        visit(tree, False)
        return found

    # --- checking ----------------------------------------------------------------------------

    def check(self, code: str) -> list[Diagnostic]:
        """Type-check ``code`` against the stubs; no line of it runs and nothing is sent."""
        import pydantic_monty as monty

        with self._lock:
            session = self._checker()
            try:
                snap = session.feed_start(f"import {_BARRIER}\n{code}")
                while isinstance(snap, monty.FunctionSnapshot) and snap.function_name == "import_stubs":
                    snap = snap.resume_auto()
            except monty.MontyTypingError as exc:
                return _diagnostics(exc.display(), shift=1)
            except monty.MontySyntaxError as exc:
                return [_syntax_diagnostic(exc, shift=1)]
            except monty.MontyCrashedError:
                self._check_session = None  # the pool replaces the worker; the next check opens a new session
                raise
            # Checked clean: the sandbox waits at the barrier's import. Refusing it ends the feed
            # (a failed feed adds nothing to the session's checking context).
            if not isinstance(snap, monty.MontyComplete):
                try:
                    snap.resume({"exception": ImportError("check only")})
                except monty.MontyError:
                    pass
            return []

    # --- running -----------------------------------------------------------------------------

    def run(
        self,
        code: str,
        *,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
        max_memory_bytes: int = DEFAULT_MAX_MEMORY_BYTES,
        max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
        max_value_chars: int = DEFAULT_MAX_VALUE_CHARS,
        cancel_event: Any = None,
        progress_callback: Callable[[int, str], Any] | None = None,
        confirm: Callable[[Any, dict[str, Any]], object] | None = None,
    ) -> CodeRun:
        """Check ``code``, then run it in a fresh sandbox. ``timeout_seconds`` bounds the run from
        the moment it starts executing (the sandbox's own time, its sleeps and the tool calls'; the
        wait for a turn is bounded apart, by ``max_queue_seconds``), ``max_tool_calls`` the calls it
        may make, ``max_memory_bytes`` its heap, ``max_output_chars`` the printed output kept and
        ``max_value_chars`` the value's JSON. Setting ``cancel_event`` (anything with ``is_set()``)
        stops the run at once: the sandbox is stopped and the tool calls in flight are cancelled.
        ``progress_callback(count, message)`` hears each progress update of the tool calls (from
        their threads): ``count`` grows by one per update, ``message`` names the function.
        ``confirm`` (else the one given to ``CodeMode``) is the package's ``confirm=`` rule for
        this run: asked ``confirm(info, arguments)`` before a destructive tool is sent.
        Nothing is sent when the check fails."""
        if timeout_seconds <= 0 or max_tool_calls < 0 or max_memory_bytes <= 0:
            raise ValueError("timeout_seconds and max_memory_bytes must be positive, max_tool_calls not negative")
        if max_output_chars < 0 or max_value_chars < 0:
            raise ValueError("max_output_chars and max_value_chars must not be negative")
        diagnostics = self.check(code)
        if diagnostics:
            first = diagnostics[0]
            more = f" (and {len(diagnostics) - 1} more)" if len(diagnostics) > 1 else ""
            return CodeRun(error=RunError("check", f"{first}{more}", tuple(diagnostics)))
        limits = _Limits(timeout_seconds, max_tool_calls, max_memory_bytes, max_output_chars, max_value_chars)
        run = _Run(self, code, limits, cancel_event, progress_callback)
        run.confirm = confirm or self._confirm
        return run.go()

    # --- the sandbox -------------------------------------------------------------------------

    def _external_modules(self, calls: Callable[[str, str], Callable[..., Any]] | None) -> dict[str, Any]:
        """``tools`` with one submodule per stub module. ``calls`` makes each module's host
        functions; without it (checking) the modules carry only their stubs."""
        import pydantic_monty as monty

        subs: dict[str, Any] = {}
        for module, functions in self._modules.items():
            attrs: dict[str, Any] = {f: calls(module, f) for f in functions} if calls is not None else {}
            if calls is not None:
                for attr in _SURFACE_ATTRS:  # host functions named tools.<module>.<attr>.<method>
                    served = [t.function for t in self._functions(module) if t.function.startswith(f"{attr}.")]
                    if served:
                        attrs[attr] = monty.ExternalModule({f.partition(".")[2]: calls(module, f) for f in served})
            attrs["FUNCTIONS"] = list(functions)  # the names, for code that wants to see them
            subs[module] = monty.ExternalModule(attrs, stubs=self._stubs[module] + _NAMES_STUB)
        subs["MODULES"] = list(self._modules)
        return {
            SANDBOX_PACKAGE: monty.ExternalModule(subs, stubs="MODULES: list[str]\n"),
            _BARRIER: monty.ExternalModule({}, stubs=""),
        }

    def _run_modules(self) -> dict[str, Any]:
        """The modules a run imports: built once (their functions are stateless stand-ins)."""
        if self._for_runs is None:
            self._for_runs = self._external_modules(_no_direct_calls)
        return self._for_runs

    def _ensure_pool(self) -> Any:
        if self._pool is None:
            import pydantic_monty as monty

            # The check session keeps one worker (its checker stays warm); the runs admitted by the
            # gate take one each, so a run never waits for a worker once it has its turn.
            pool = monty.Monty(min_processes=1, max_processes=self._gate.slots + 1)
            pool.__enter__()
            self._pool = pool
            self._finalizer = weakref.finalize(self, _close_pool, pool, [None])
        return self._pool

    def _checker(self) -> Any:
        if self._check_session is None:
            session = self._ensure_pool().checkout(
                type_check=True, type_check_format="json", external_modules=self._external_modules(None)
            )
            session.__enter__()
            self._check_session = session
            if self._finalizer is not None:
                self._finalizer.detach()
                self._finalizer = weakref.finalize(self, _close_pool, self._pool, [session])
        return self._check_session

    def close(self) -> None:
        """Stop the sandbox's worker processes (they start again on the next check or run)."""
        with self._lock:
            if self._finalizer is not None:
                self._finalizer()
            self._pool = self._check_session = self._finalizer = None
            if self._calls is not None:
                self._calls.shutdown(wait=False, cancel_futures=True)
                self._calls = None

    def __enter__(self) -> CodeMode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call_pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._calls is None:
                workers = self._max_parallel_calls * self._gate.slots
                self._calls = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="code-mode-call")
            return self._calls

    def _call(
        self, recorder: _Recorder, module: str, function: str, arguments: dict[str, Any], options: dict[str, Any]
    ) -> Any:
        """One tool call through the package's typed method (with the contract's call options:
        what is left of the run's time, its cancel event); the value as plain data."""
        tools = self._package.Tools(recorder, options)
        kind = self._tools[f"{module}.{function}"].kind
        if kind != "tool":  # tools.<attr>.resources.<method>: the package's typed read or prompt
            attr, _, method = function.partition(".")
            return _served(kind, getattr(getattr(getattr(tools, self._attrs[module]), attr), method)(**arguments))
        result = getattr(getattr(tools.results, self._attrs[module]), function)(**arguments)
        return _plain(result.value, self._package.ToolOutput)

    def _refusal(self, module: str, function: str, kwargs: dict[str, Any]) -> str | None:
        """Why the tool's input schema refuses these arguments (one line naming the parameter and
        the rule), checked on the host before anything is sent; None when they fit, or when the
        schema cannot be used (unresolvable ``$ref``, a schema jsonschema refuses: the server judges)."""
        tool = self._tools[f"{module}.{function}"]
        schema = self._input_schema(tool.wire_name)
        if schema is None:
            return None
        # The wire arguments exactly as the typed method builds them (its names, omitted ones
        # dropped): the method is run against a provider that keeps them and sends nothing.
        capture = _Capture()
        try:
            getattr(getattr(self._package.Tools(capture, {}).results, self._attrs[module]), function)(**kwargs)
        except _Captured:
            pass
        except TypeError:
            return None  # the typed method refuses them itself when the call is made
        if capture.arguments is None:
            return None
        try:
            return validate_arguments(schema, capture.arguments)
        except Exception:  # an unresolvable $ref (nothing is fetched), a schema jsonschema refuses
            return None

    def _input_schema(self, wire: str) -> Mapping[str, Any] | None:
        """The tool's ``inputSchema`` as listed, from the package's data (``_testing_data``: every
        generated package carries each tool's listing there); None for a package without it."""
        schemas = self._input_schemas
        if schemas is None:
            with self._lock:
                if self._input_schemas is None:
                    self._input_schemas = _input_schemas(self._package.__name__)
                schemas = self._input_schemas
        found = schemas.get(wire)
        return found if isinstance(found, Mapping) else None

    def _parameters(self, module: str, function: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """A stub function's keyword parameters and the required ones (parsed once, when first called)."""
        key = f"{module}.{function}"
        found = self._params.get(key)
        if found is None:
            import ast

            tree = ast.parse(textwrap.dedent(self._tools[key].stub)).body[0]
            args = tree.args if isinstance(tree, ast.AsyncFunctionDef) else None
            names = tuple(a.arg for a in args.kwonlyargs) if args else ()
            required = (
                tuple(a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None)
                if args
                else ()
            )
            found = self._params[key] = (names, required)
        return found

    def _kind(self, exc: BaseException) -> str:
        for cls, kind in self._errors:
            if isinstance(exc, cls):
                return kind
        return "internal"


def _close_pool(pool: Any, sessions: list[Any]) -> None:
    for session in sessions:
        if session is not None:
            try:
                session.__exit__(None, None, None)
            except Exception:  # noqa: S110 - closing a worker that already died
                pass
    pool.__exit__(None, None, None)


@dataclass(frozen=True)
class _Limits:
    timeout: float
    max_calls: int
    max_memory: int
    max_output: int
    max_value: int


def _busy(ahead: int, wait: float, *, full: bool = False) -> RunError:
    why = "the queue is full" if full else f"it waited {wait:g} s, the queue limit, without getting a turn"
    return RunError(
        "busy",
        f"busy, {ahead} run(s) ahead: {why}; nothing ran and no tool was called. Send the code again later.",
    )


def _timeout(limit: float) -> RunError:
    return RunError(
        "timeout",
        f"the run took longer than its time limit of {limit:g} s (its own time, its sleeps and its tool calls); "
        "it was stopped. Do less in one run: fewer or gathered calls, no long sleeps, smaller loops.",
    )


class _Gate:
    """Admission of runs: at most ``slots`` execute at once; the others wait in order of arrival,
    at most ``max_waiting`` of them, each for at most the queue time (then "busy")."""

    def __init__(self, slots: int, max_waiting: int) -> None:
        self.slots = slots
        self.max_waiting = max_waiting
        self.running = 0
        self.waiting: deque[object] = deque()
        self.cond = threading.Condition()

    def enter(self, wait: float, cancel_event: Any) -> None:
        """Take a turn, or raise ``_Stopped`` ("busy" past the queue's bounds, "cancelled")."""
        deadline = time.monotonic() + wait
        ticket = object()
        with self.cond:
            if self.running < self.slots and not self.waiting:
                self.running += 1
                return
            if len(self.waiting) >= self.max_waiting:
                raise _Stopped(_busy(self.running + len(self.waiting), wait, full=True))
            self.waiting.append(ticket)
            try:
                while not (self.running < self.slots and self.waiting[0] is ticket):
                    if cancel_event is not None and cancel_event.is_set():
                        raise _Stopped(RunError("cancelled", "the run was cancelled before it started; nothing ran"))
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise _Stopped(_busy(self.running + self.waiting.index(ticket), wait))
                    self.cond.wait(min(left, CANCEL_POLL_SECONDS))
                self.running += 1
            finally:
                self.waiting.remove(ticket)
                self.cond.notify_all()

    def leave(self) -> None:
        with self.cond:
            self.running -= 1
            self.cond.notify_all()


class _Watchdog:
    """One thread per ``CodeMode`` that looks at every executing run each ``CANCEL_POLL_SECONDS``
    (``_Run.watch``); started with the first run, it ends when no run is left to watch."""

    def __init__(self) -> None:
        self.runs: set[_Run] = set()
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def add(self, run: _Run) -> None:
        with self.lock:
            self.runs.add(run)
            if self.thread is None:
                self.thread = threading.Thread(target=self._loop, name="code-mode-watchdog", daemon=True)
                self.thread.start()

    def discard(self, run: _Run) -> None:
        with self.lock:
            self.runs.discard(run)

    def _loop(self) -> None:
        while True:
            time.sleep(CANCEL_POLL_SECONDS)
            with self.lock:
                runs = list(self.runs)
                if not runs:
                    self.thread = None
                    return
            now = time.monotonic()
            for run in runs:
                run.watch(now)


class _Output:
    """The sandbox's print callback: the first ``limit`` characters are kept, the rest counted."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.kept = 0
        self.cut = 0

    def __call__(self, stream: str, text: str) -> None:
        room = self.limit - self.kept
        if room >= len(text):
            self.parts.append(text)
            self.kept += len(text)
            return
        if room > 0:
            self.parts.append(text[:room])
            self.kept = self.limit
        self.cut += len(text) - max(room, 0)

    def text(self) -> str:
        out = "".join(self.parts)
        if self.cut:
            out += (
                f"\n[output cut: {self.cut:,} more characters were printed than the {self.limit:,} kept "
                "(max_output_chars); print less, or return only what you need]\n"
            )
        return out


def _advice(kind: str, message: str) -> str:
    """A failed call's message as the code's author can act on it (no host API names)."""
    if kind == "input_required":
        message = message.split("; pass on_input=", 1)[0]
        return f"{message}; code mode cannot answer a tool's questions: call it with arguments that need none"
    if kind in ("timeout", "unavailable"):
        return f"{message}; the run may try again once, or do without this result"
    return message


#: What pydantic-monty hands the host for a list or dict that contains itself.
_RECURSIVE = frozenset({"[...]", "{...}"})


class _NotJson(Exception):
    """A value that JSON cannot carry as it is; the message says what and where."""


def _json_data(value: Any, where: str, depth: int = 0) -> Any:
    """``value`` as JSON data (a tuple as a list), unchanged otherwise; ``_NotJson`` naming what is
    not JSON and where (NaN and infinities, bytes, sets, class instances, keys that are not
    strings, nesting deeper than ``MAX_NESTING``)."""
    if isinstance(value, str) and depth > 0 and value in _RECURSIVE:
        # The sandbox hands over a list or dict that contains itself as this text; a real string
        # "[...]" inside a value is refused as well (documented).
        raise _NotJson(
            f"{where} is a list or dict that contains itself (or the text {value!r}), which JSON cannot carry"
        )
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise _NotJson(f"{where} is {value!r}, which JSON cannot carry")
    if depth >= MAX_NESTING and isinstance(value, list | tuple | dict):
        root = where.split("[", 1)[0]
        raise _NotJson(f"the lists and dicts in {root} nest deeper than {MAX_NESTING} levels")
    if isinstance(value, list | tuple):
        return [_json_data(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _NotJson(f"{where} has the key {key!r}: JSON keys are strings (use str(key))")
            out[key] = _json_data(item, f"{where}[{key!r}]", depth + 1)
        return out
    what = type(value).__name__ if isinstance(value, bytes | bytearray | set | frozenset) else "a class instance"
    raise _NotJson(f"{where} is {what}, not JSON; use str, int, float, bool, None, lists and dicts with string keys")


class _Run:
    """One run: waits for its turn, then drives the sandbox from suspension to suspension,
    answering tool calls, while a watchdog thread stops it at its deadline or cancellation."""

    def __init__(
        self, mode: CodeMode, code: str, limits: _Limits, cancel_event: Any, progress: Callable[[int, str], Any] | None
    ) -> None:
        self.mode = mode
        self.progress = progress
        self.confirm: Callable[[Any, dict[str, Any]], object] | None = None
        self.updates = 0
        self.updates_lock = threading.Lock()
        self.code = code
        self.limits = limits
        self.cancel_event = cancel_event
        self.deadline = math.inf  # set when the run starts executing
        self.calls: list[ToolCall] = []
        self.made = 0  # tool calls the code made (sent, or being sent)
        self.pending: dict[int, tuple[str, str, dict[str, Any]]] = {}  # made, not sent yet
        self.inflight: dict[int, Future[dict[str, Any]]] = {}  # sent, not answered to the sandbox yet
        # Set at the deadline, a cancellation, or the end of the run: the calls in flight get it as
        # their cancel_event, the sleeps wake on it.
        self.stop = threading.Event()
        self.reason: RunError | None = None  # why the watchdog stopped the run
        self.stopped_at = math.inf
        self.done = threading.Event()
        self.in_sandbox = False
        self.killed = False
        self.pid: int | None = None

    def go(self) -> CodeRun:
        run = CodeRun(calls=self.calls)
        output = _Output(self.limits.max_output)
        try:
            self.mode._gate.enter(self.mode._max_queue_seconds, self.cancel_event)
        except _Stopped as stop:
            run.error = stop.error
            return run
        try:
            self._execute(run, output)
        finally:
            self.done.set()
            self.mode._watchdog.discard(self)
            self.stop.set()  # calls still in flight (a stopped run) give up at once
            self.mode._gate.leave()
        run.output = output.text()
        return run

    def _execute(self, run: CodeRun, output: _Output) -> None:
        import pydantic_monty as monty

        limits: dict[str, Any] = {
            "max_feed_duration_secs": self.limits.timeout,
            "max_memory": self.limits.max_memory,
            # The pool's count of round trips (calls, imports, sleeps, futures) is only a backstop:
            # the run counts its tool calls itself.
            "max_suspensions": 4 * self.limits.max_calls + _ROUND_TRIPS,
        }
        try:
            with self.mode._ensure_pool().checkout(
                limits=limits,
                external_modules=self.mode._run_modules(),
                os_policy={"sleep": "call_host"},  # sleeps come to the host, which counts them
            ) as session:
                self.pid = session.worker_pid
                # The run has its turn and its worker: its time starts now.
                self.deadline = time.monotonic() + self.limits.timeout
                self.mode._watchdog.add(self)
                snap = self._sandbox(lambda: session.feed_start(self.code, print_callback=output, skip_type_check=True))
                run.value = self._value(self._drive(snap))
        except _Stopped as stop:
            run.error = stop.error
        except monty.MontyRuntimeError as exc:
            run.error = self.reason or _runtime_error(exc)
        except monty.MontySyntaxError as exc:
            diagnostic = _syntax_diagnostic(exc, shift=0)
            run.error = RunError("check", str(diagnostic), (diagnostic,))
        except monty.MontyError as exc:  # the worker crashed, or the watchdog killed it
            run.error = self.reason or RunError("sandbox", one_line(str(exc)))

    def watch(self, now: float) -> None:
        """One look by the watchdog (every ``CANCEL_POLL_SECONDS``): stops the run at its deadline
        or when ``cancel_event`` is set: the calls in flight get the stop, and a sandbox still
        executing is killed (at once when cancelled; after a short grace at the deadline, which the
        sandbox's own time limit normally beats)."""
        if self.reason is None:
            if self.cancel_event is not None and self.cancel_event.is_set():
                self.reason = RunError("cancelled", "the run was cancelled by its caller; it was stopped")
            elif now >= self.deadline:
                self.reason = _timeout(self.limits.timeout)
            if self.reason is not None:
                self.stopped_at = now
                self.stop.set()
        if self.reason is None or self.killed or not self.in_sandbox or self.pid is None:
            return
        if self.reason.kind == "cancelled" or now >= self.stopped_at + _KILL_GRACE_SECONDS:
            self.killed = True
            with contextlib.suppress(OSError):
                os.kill(self.pid, getattr(signal, "SIGKILL", signal.SIGTERM))

    def _sandbox(self, step: Callable[..., Any], *args: Any) -> Any:
        """One step of the sandbox (feed or resume), marked so the watchdog knows it executes."""
        if self.reason is not None:
            raise _Stopped(self.reason)
        self.in_sandbox = True
        try:
            return step(*args)
        finally:
            self.in_sandbox = False

    def _drive(self, snap: Any) -> Any:
        import pydantic_monty as monty

        while True:
            if self.reason is not None:
                raise _Stopped(self.reason)
            if isinstance(snap, monty.MontyComplete):
                return snap.output
            if time.monotonic() >= self.deadline:
                raise _Stopped(_timeout(self.limits.timeout))
            current = snap
            if isinstance(current, monty.FunctionSnapshot):
                if current.is_os_function:
                    # Imports of the tool modules are answered, sleeps waited out here (within the
                    # run's time); every other OS call (files, environment...) is left to Monty's refusal.
                    if current.function_name in ("import", "import_stubs"):
                        snap = self._sandbox(current.resume_auto)
                    elif current.function_name in ("time.sleep", "asyncio.sleep"):
                        self._sleep(current.function_name, current.args)
                        snap = self._sandbox(current.resume, {"return_value": None})
                    else:
                        snap = self._sandbox(current.resume_not_handled)
                    continue
                snap = self._sandbox(current.resume, self._made(current))
            elif isinstance(current, monty.FutureSnapshot):
                results = self._settle(list(current.pending_call_ids))
                snap = self._sandbox(current.resume, results)
            else:  # a name lookup: no host names exist (Monty raises NameError)
                snap = self._sandbox(current.resume_auto)

    def _made(self, snap: Any) -> Any:
        """A stub function was called: a future for it (sent when awaited), or the error it raises."""
        module, function = self._target(snap.function_name)
        if snap.args:
            return {"exception": TypeError(f"{function}() takes keyword arguments only, as in its stub")}
        names, required = self.mode._parameters(module, function)
        kwargs = dict(snap.kwargs)
        unknown = [k for k in kwargs if k not in names]
        missing = [k for k in required if k not in kwargs]
        if unknown or missing:
            problem = (f"got an unexpected keyword argument {unknown[0]!r}" if unknown
                       else f"is missing the required argument {missing[0]!r}")  # fmt: skip
            return {"exception": TypeError(f"{function}() {problem}; its parameters: {', '.join(names) or 'none'}")}
        try:
            arguments = _json_data(kwargs, "the arguments")
        except (_NotJson, RecursionError) as exc:
            problem = str(exc) if isinstance(exc, _NotJson) else f"the arguments nest deeper than {MAX_NESTING} levels"
            return {"exception": RuntimeError(f"invalid_arguments: {function}() was not called: {problem}")}
        refused = self.mode._refusal(module, function, arguments)
        if refused is not None:
            return {"exception": RuntimeError(f"invalid_arguments: {function}() was not called: {refused}")}
        if self.made >= self.limits.max_calls:
            raise _Stopped(
                RunError(
                    "tool_calls",
                    f"the code made more than {self.limits.max_calls} tool calls (max_tool_calls; a resource read or a "
                    f"prompt counts as one); call "
                    f"{self.made + 1}, {SANDBOX_PACKAGE}.{module}.{function}, was not sent and the run stopped. "
                    "Make fewer calls: a tool that takes a list, or fewer items.",
                )
            )
        self.made += 1
        # The stub functions are coroutines: each call is answered with a future, and sent
        # when the sandbox awaits it (gathered calls are then sent side by side).
        self.pending[snap.call_id] = (module, function, arguments)
        return {"future": ...}

    def _sleep(self, name: str, args: Sequence[Any]) -> None:
        """``time.sleep`` / ``asyncio.sleep`` in the sandbox: waited here, one at a time. A sleep
        that would end past the deadline stops the run with ``timeout`` at once."""
        seconds = float(args[0]) if args and isinstance(args[0], int | float) else 0.0
        left = self.deadline - time.monotonic()
        if seconds > left:
            raise _Stopped(
                RunError(
                    "timeout",
                    f"{name}({seconds:g}) would end past the run's time limit of {self.limits.timeout:g} s "
                    f"({max(left, 0):.1f} s were left); the run was stopped. Sleep less, or not at all.",
                )
            )
        if self.stop.wait(max(seconds, 0.0)):
            raise _Stopped(self.reason or _timeout(self.limits.timeout))

    def _target(self, name: str) -> tuple[str, str]:
        prefix, _, rest = name.partition(".")
        module, _, function = rest.partition(".")
        if prefix != SANDBOX_PACKAGE or f"{module}.{function}" not in self.mode._tools:
            raise _Stopped(RunError("sandbox", f"unknown host function {name!r}"))
        return module, function

    def _settle(self, ids: Sequence[int]) -> dict[int, Any]:
        """The awaited calls: sent side by side on the shared host pool, at most
        ``max_parallel_calls`` of this run in flight; answered as they finish (a gathered result
        goes into the sandbox, where its memory counts, rather than waiting on the host)."""
        if len(ids) == 1 and not self.inflight and ids[0] in self.pending:
            # One call awaited alone: made on this thread (no hop to the pool); its time limit and
            # the run's cancel_event bound it as they bound a pooled one.
            module, function, arguments = self.pending.pop(ids[0])
            answer = self._answer(module, function, arguments)
            if self.reason is not None:
                raise _Stopped(self.reason)
            if time.monotonic() >= self.deadline:
                raise _Stopped(_timeout(self.limits.timeout))
            return {ids[0]: answer}
        pool = self.mode._call_pool()
        for i in ids:
            if len(self.inflight) >= self.mode._max_parallel_calls:
                break
            if i in self.pending:
                module, function, arguments = self.pending.pop(i)
                self.inflight[i] = pool.submit(self._answer, module, function, arguments)
        waiting = [self.inflight[i] for i in ids if i in self.inflight]
        if not waiting:
            raise _Stopped(RunError("sandbox", "the sandbox awaited a call the host never saw"))
        wait(waiting, timeout=max(self.deadline + _KILL_GRACE_SECONDS - time.monotonic(), 0.0),
             return_when=FIRST_COMPLETED)  # fmt: skip
        results = {}
        for i in ids:
            future = self.inflight.get(i)
            if future is not None and future.done():
                del self.inflight[i]
                results[i] = future.result()
        # A call that ended at the deadline (cancelled through its cancel_event, or timed out) ends
        # the run with "timeout", whether or not the code would catch the error.
        if self.reason is not None:
            raise _Stopped(self.reason)
        if not results or time.monotonic() >= self.deadline:
            raise _Stopped(_timeout(self.limits.timeout))
        return results

    def _answer(self, module: str, function: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call the tool; its value, or the exception the sandbox sees, as Monty's answer."""
        tool = self.mode._tools[f"{module}.{function}"]
        remaining = self.deadline - time.monotonic()
        start = time.perf_counter()
        recorder = _Recorder(self.mode._provider)
        kind: str | None = None
        message = answer = None
        if remaining <= 0 or self.stop.is_set():
            kind, message = "timeout", "the run's time is up"
        else:
            try:
                options: dict[str, Any] = {"timeout_seconds": remaining, "cancel_event": self.stop}
                if self.progress is not None:
                    options["progress_callback"] = functools.partial(self._progress, function)
                if self.confirm is not None:
                    options["confirm"] = self.confirm
                answer = self.mode._call(recorder, module, function, arguments, options)
            except TypeError as exc:  # the caller's mistake (the typed method refused the arguments)
                kind, message = "invalid_arguments", f"{function}() was not called: {one_line(str(exc))}"
            except Exception as exc:  # a tool failure never crashes the run: the snippet sees it
                kind, message = self.mode._kind(exc), _advice(self.mode._kind(exc), one_line(str(exc)))
        # What reached call_tool (the first send; a retry sends the same). A call refused before
        # it was sent (its arguments, a confirmation, the run's time) is no call: not recorded.
        if recorder.sent:
            wire, sent = recorder.sent[0]
            call = ToolCall(f"{SANDBOX_PACKAGE}.{tool.module}.{tool.function}", wire, sent,
                            time.perf_counter() - start, kind)  # fmt: skip
            self.calls.append(call)
        if kind is not None:
            return {"exception": RuntimeError(f"{kind}: {message}")}
        return {"return_value": answer}

    def _progress(self, function: str, progress: float, total: float | None, message: str | None) -> None:
        """A tool call's progress update, passed on as the run's (a count, the function's words)."""
        if self.progress is None or self.stop.is_set():
            return
        with self.updates_lock:
            self.updates += 1
            count = self.updates
        done = message or (f"{progress:g}/{total:g}" if total else f"{progress:g}")
        with contextlib.suppress(Exception):  # a listener's failure never fails the call
            self.progress(count, f"{function}: {done}")

    def _value(self, output: Any) -> Any:
        """The last expression's value as JSON data, within ``max_value_chars``."""
        try:
            value = _json_data(output, "the value")
        except (_NotJson, RecursionError) as exc:
            problem = str(exc) if isinstance(exc, _NotJson) else f"the value nests deeper than {MAX_NESTING} levels"
            raise _Stopped(RunError("value", f"{problem}; the last expression must be JSON data")) from None
        size = len(json.dumps(value, ensure_ascii=False))
        if size > self.limits.max_value:
            raise _Stopped(
                RunError(
                    "output",
                    f"the value is {size:,} characters of JSON, over the {self.limits.max_value:,} kept "
                    "(max_value_chars); it was not returned. Return less: a count, a slice, the fields you need.",
                )
            )
        return value


def _no_direct_calls(module: str, function: str) -> Callable[..., Any]:
    """The host functions' stand-ins: the run answers every call from its snapshot, so these
    are never called; they only tell the sandbox that the name is a function."""

    def host(*args: Any, **kwargs: Any) -> Any:  # pragma: no cover - never reached
        raise RuntimeError(f"{module}.{function} was called outside a run")

    host.__name__ = function
    return host


class _Recorder:
    """The provider as one call's typed method sees it: every ``call_tool`` it makes (a retry
    makes several) is kept, with the wire name and arguments exactly as sent, and forwarded by
    the contract's rule (an option reaches the provider only when it declares it)."""

    def __init__(self, provider: Any) -> None:
        self.provider = provider
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def call_tool(self, tool_name: str, arguments: dict[str, Any], **options: Any) -> Any:
        self.sent.append((tool_name, dict(arguments)))
        return invoke_call_tool(self.provider, tool_name, arguments, **options)

    # The package's resources and prompts classes call these (read_resource(uri), get_prompt(name,
    # arguments)): kept as the URI read or the prompt's name, forwarded with the options declared.
    def read_resource(self, uri: str, **options: Any) -> Any:
        self.sent.append((uri, {}))
        return _surface_call(self.provider, "read_resource", (uri,), options)

    def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None, **options: Any) -> Any:
        self.sent.append((name, dict(arguments or {})))
        return _surface_call(self.provider, "get_prompt", (name, dict(arguments or {})), options)


def _surface_call(provider: Any, method: str, args: tuple[Any, ...], options: Mapping[str, Any]) -> Any:
    """``provider.<method>(*args)`` with the options it declares; a provider without the method
    answers an error envelope (``unavailable``), which the package raises as its error."""
    func = getattr(provider, method, None)
    if not callable(func):
        what = f"the provider ({type(provider).__name__}) has no {method}(); use the runtime registry"
        return {"status": "error", "is_error": True, "result": what, "metadata": {"error_kind": "unavailable"}}
    accepted = _rules.accepted_options(func)
    given = {k: v for k, v in options.items() if v is not None and (accepted is None or k in accepted)}
    return run_sync(func(*args, **given))


def _served(kind: str, value: Any) -> Any:
    """A read's or prompt's value as the stub promises it: text, the JSON value, bytes, a dict."""
    if kind == "json":
        return value.value
    if kind == "blob":
        return value.data
    if kind == "prompt":
        messages = [{"role": m.role, "type": m.type, "text": m.text, "content": dict(m.content)}
                    for m in value.messages]  # fmt: skip
        return {"description": value.description, "messages": messages}
    return value.text


class _Captured(Exception):
    """Raised by ``_Capture``: the arguments are kept, nothing is sent."""


class _Capture:
    """A provider that keeps the wire arguments a typed method would send, and sends nothing."""

    arguments: dict[str, Any] | None = None

    def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> Any:
        self.arguments = dict(arguments)
        raise _Captured


def _input_schemas(package: str) -> dict[str, Any]:
    """Each tool's listed ``inputSchema`` by wire name, from ``<package>._testing_data``."""
    try:
        data = importlib.import_module(f"{package}._testing_data").DATA
        tools = json.loads(data)["tools"]
        return {wire: (entry.get("mcp") or {}).get("inputSchema") for wire, entry in tools.items()}
    except (ImportError, AttributeError, KeyError, TypeError, ValueError):
        return {}


def _sync_provider(provider: Any) -> Any:
    """The provider for the package's sync ``Tools``: itself, or an adapter over ``acall_tool``."""
    if callable(getattr(provider, "call_tool", None)):
        return provider
    if callable(getattr(provider, "acall_tool", None)):
        return _AsyncAdapter(provider)
    raise TypeError("the provider has no call_tool or acall_tool")


class _AsyncAdapter:
    def __init__(self, provider: Any) -> None:
        self._provider = provider

    def call_tool(self, tool_name: str, arguments: dict[str, Any], **kwargs: Any) -> Any:
        # The one running-loop policy (``_rules.run_sync``): works from a thread that runs a loop too.
        return run_sync(self._provider.acall_tool(tool_name, arguments, **kwargs))

    def read_resource(self, uri: str, **kwargs: Any) -> Any:
        return _surface_call(_Awaited(self._provider, "aread_resource"), "read_resource", (uri,), kwargs)

    def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None, **kwargs: Any) -> Any:
        return _surface_call(_Awaited(self._provider, "aget_prompt"), "get_prompt", (name, arguments), kwargs)


class _Awaited:
    """An async provider's ``a<method>`` (else its sync one) under the sync name; ``_surface_call``
    runs what it returns by the one running-loop policy."""

    def __init__(self, provider: Any, method: str) -> None:
        found = getattr(provider, method, None) or getattr(provider, method[1:], None)
        if callable(found):
            setattr(self, method[1:], found)


def _plain(value: Any, tool_output: type) -> Any:
    """A decoded value as the plain data the stub promises: models as dicts with wire keys (only
    the keys the result had), an untyped result (``ToolOutput``) as its text."""
    if isinstance(value, tool_output):
        return cast(Any, value).text
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, list | tuple):
        return [_plain(v, tool_output) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v, tool_output) for k, v in value.items()}
    return value


#: Frames of a traceback shown at most: the first and the last ones, the rest counted.
_TRACEBACK_FRAMES = 8
_AWAIT_HINT = (
    "hint: the tool functions are async: a call gives a coroutine until it is awaited; "
    "write `await module.function(...)` (or gather several with asyncio.gather)"
)


def _traceback(exc: Any) -> str:
    """The snippet's own lines of a sandbox traceback, most recent call last: one line per frame
    (its line, function and source), repeats collapsed, at most ``_TRACEBACK_FRAMES`` shown."""
    rows: list[list[Any]] = []  # [line, function, source, times]
    for frame in exc.traceback():
        where = (frame.line, frame.function_name or "<module>", (frame.source_line or "").strip())
        if rows and tuple(rows[-1][:3]) == where:
            rows[-1][3] += 1
        else:
            rows.append([*where, 1])
    lines = []
    for line, function, source, times in rows:
        lines.append(f"  line {line}, in {function}: {source}" if source else f"  line {line}, in {function}")
        if times > 1:
            lines.append(f"  [the line above repeated {times - 1} more times]")
    if len(lines) > _TRACEBACK_FRAMES:
        head, tail = _TRACEBACK_FRAMES // 2, _TRACEBACK_FRAMES - _TRACEBACK_FRAMES // 2
        lines = [*lines[:head], f"  [{len(lines) - head - tail} more lines]", *lines[-tail:]]
    return "\n".join(["Traceback (most recent call last):", *lines])


def _runtime_error(exc: Any) -> RunError:
    text = exc.display("type-msg")
    head = text.split(":", 1)[0]
    if head == "TimeoutError" and ("time limit exceeded" in text or "sleep limit exceeded" in text):
        return RunError("timeout", one_line(text))
    if head == "MemoryError" and ("memory limit exceeded" in text or "exceeded its memory limit" in text):
        return RunError(
            "memory",
            f"{one_line(text)}: the run used more memory than its limit (max_memory_bytes); "
            "keep less at once: fewer or smaller results, no big strings or lists",
        )
    if head == "RuntimeError" and "suspension limit" in text:
        return RunError("sandbox", f"the run made too many host round trips: {one_line(text)}")
    message = f"{_traceback(exc)}\n{text}"
    if "coroutine" in text.lower():
        message += f"\n{_AWAIT_HINT}"
    return RunError("exception", message)


def _diagnostics(rendered: str, *, shift: int) -> list[Diagnostic]:
    """ty's JSON diagnostics, one line each, in the snippet's lines (``shift``: lines put in front)."""
    try:
        items = json.loads(rendered)
    except ValueError:
        return [Diagnostic(1, 1, "check", one_line(rendered))]
    out = []
    for item in items if isinstance(items, list) else []:
        where = item.get("location") or {}
        line = max(int(where.get("row") or 1) - shift, 1)
        message = one_line(item["message"])
        if "CoroutineType[" in message:
            message += f" ({_AWAIT_HINT})"
        out.append(Diagnostic(line, int(where.get("column") or 1), str(item.get("name")), message))
    return sorted(out, key=lambda d: (d.line, d.column, d.code)) or [Diagnostic(1, 1, "check", "rejected")]


def _syntax_diagnostic(exc: Any, *, shift: int) -> Diagnostic:
    frames = exc.traceback()
    line = frames[-1].line - shift if frames else 1
    column = frames[-1].column if frames else 1
    return Diagnostic(max(line, 1), column, "invalid-syntax", one_line(exc.display("msg")))


def _strip_header(text: str) -> str:
    lines = text.split("\n")
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return "\n".join(lines)


def _typing_line(stub: str, body: str) -> str:
    """The stub's ``typing`` import, cut to the names ``body`` uses."""
    first = stub.split("\n", 1)[0]
    if not first.startswith("from typing import "):
        return ""
    used = set(re.findall(r"[A-Za-z_]+", body))
    names = [n for n in first.removeprefix("from typing import ").split(", ") if n in used]
    return f"from typing import {', '.join(names)}" if names else ""


def _split_stub(
    stub: str,
) -> tuple[dict[str, str], dict[str, tuple[str, tuple[str, ...], str, str]], dict[str, str]]:
    """A stub module's classes (name -> text), functions (name -> text, the classes it needs,
    the brief text: the signature and the docstring's first line, and that line), and the classes
    that hold its resources and prompts (``resources: SampleResources`` -> "resources" ->
    "SampleResources"), whose methods are functions named ``resources.<method>``."""
    import ast

    tree = ast.parse(stub)
    lines = stub.split("\n")
    classes: dict[str, str] = {}
    refs: dict[str, set[str]] = {}
    functions: dict[str, tuple[str, set[str]]] = {}
    briefs: dict[str, tuple[str, str]] = {}
    holders = {
        stmt.target.id: stmt.annotation.id
        for stmt in tree.body
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id in _SURFACE_ATTRS
        and isinstance(stmt.annotation, ast.Name)
    }  # fmt: skip
    held = {cls: attr for attr, cls in holders.items()}
    body: list[tuple[str, ast.stmt]] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and stmt.name in held:
            body += [(f"{held[stmt.name]}.", m) for m in stmt.body if isinstance(m, ast.AsyncFunctionDef)]
        elif not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id in holders):
            body.append(("", stmt))
    for prefix, stmt in body:
        # Whole lines (top-level statements): ast.get_source_segment splits the text on every call.
        text = "\n".join(lines[stmt.lineno - 1 : stmt.end_lineno])
        names = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
        names |= {
            c.value for c in ast.walk(stmt) if isinstance(c, ast.Constant) and isinstance(c.value, str)
        }  # quoted forward references
        if isinstance(stmt, ast.ClassDef):
            classes[stmt.name], refs[stmt.name] = text, names
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            classes[stmt.targets[0].id], refs[stmt.targets[0].id] = text, names
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            classes[stmt.target.id], refs[stmt.target.id] = text, names
        elif isinstance(stmt, ast.AsyncFunctionDef):
            name = prefix + stmt.name
            functions[name] = (text, names)
            first = (ast.get_docstring(stmt) or "").split("\n", 1)[0]
            header = "\n".join(lines[stmt.lineno - 1 : stmt.body[0].lineno - 1])
            escaped = first.replace("\\", "\\\\").replace('"', '\\"') + (" " if first.endswith('"') else "")
            pad = " " * (stmt.col_offset + 4)
            briefs[name] = (f'{header}\n{pad}"""{escaped}"""', first)
    out = {}
    for name, (text, names) in functions.items():
        seen: set[str] = set()
        todo = [n for n in names if n in classes]
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo += [m for m in refs[n] if m in classes and m not in seen]
        out[name] = (text, tuple(n for n in classes if n in seen), *briefs[name])
    return classes, out, holders


def _docstring_of(text: str) -> str:
    """A stub function's docstring (a resource's or prompt's words, for the search index)."""
    import ast

    tree = ast.parse(textwrap.dedent(text)).body[0]
    return (ast.get_docstring(tree) if isinstance(tree, ast.AsyncFunctionDef) else None) or ""


def _stub_names(key: str, tool: _Tool) -> tuple[str, ...]:
    """The names ``stubs()`` finds a function by: ``module.function``, ``function``, ``module``;
    a resource or prompt also by its method's name and ``module.resources`` / ``module.prompts``."""
    if tool.kind == "tool":
        return (key, tool.function, tool.module)
    attr, _, method = tool.function.partition(".")
    return (key, tool.function, tool.module, method, f"{tool.module}.{attr}")


#: Distinct words of a search query that count; the rest are ignored.
_QUERY_WORDS = 32
_WORD = re.compile(r"[A-Za-z][a-z]*|[0-9]+|[A-Z]+(?![a-z])")


#: Words too common to say which tool a query means.
_STOP_WORDS = frozenset("a an and are as at be by for from in is it of on or the to with".split())


def _words(text: str) -> list[str]:
    """Lower-case words, splitting snake_case, kebab-case, dots and camelCase; no stop words."""
    return [w for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOP_WORDS]


class _Index:
    """BM25 over each tool's words (name and module count three times, the title twice), with a
    word of the query matching a word it begins (``weath`` finds ``weather``)."""

    _K1, _B = 1.2, 0.75

    def __init__(self, tools: Any) -> None:
        self.tools: list[_Tool] = list(tools)
        self.docs: list[dict[str, int]] = []
        for tool in self.tools:
            words = (
                _words(f"{tool.function} {tool.wire_name} {tool.module}") * 3
                + _words(tool.title) * 2
                + _words(tool.description)
            )
            counts: dict[str, int] = {}
            for w in words:
                counts[w] = counts.get(w, 0) + 1
            self.docs.append(counts)
        self.lengths = [sum(d.values()) for d in self.docs]
        self.average = (sum(self.lengths) / len(self.lengths)) if self.lengths else 1.0
        self.vocabulary: dict[str, list[int]] = {}
        for i, doc in enumerate(self.docs):
            for w in doc:
                self.vocabulary.setdefault(w, []).append(i)

    def search(self, query: str, limit: int) -> list[_Tool]:
        import math

        scores: dict[int, float] = {}
        n = len(self.docs)
        # The first _QUERY_WORDS distinct words only: each is compared with the whole vocabulary.
        for term in list(dict.fromkeys(_words(query)))[:_QUERY_WORDS]:
            matches = [w for w in self.vocabulary if w == term or (len(term) >= 3 and w.startswith(term))]
            for word in matches:
                postings = self.vocabulary[word]
                idf = math.log(1 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
                exact = 1.0 if word == term else 0.5
                for i in postings:
                    tf = self.docs[i][word]
                    length = self.lengths[i] / self.average
                    norm = tf * (self._K1 + 1) / (tf + self._K1 * (1 - self._B + self._B * length))
                    scores[i] = scores.get(i, 0.0) + exact * idf * norm
        ranked = sorted(scores, key=lambda i: (-scores[i], self.tools[i].module, self.tools[i].function))
        return [self.tools[i] for i in ranked[: max(limit, 0)]]
