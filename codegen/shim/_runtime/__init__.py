"""Runtime support for a toolgen-generated tool package.

This package is copied verbatim into every generated package as ``_runtime/``. Its canonical
source is ``codegen/shim/_runtime/`` in the toolgen repository: change it there and regenerate,
never edit a generated copy. It depends only on the standard library and pydantic 2, so a
generated package needs nothing else, and it imports pydantic only on the first decode that needs
a model: importing a generated package builds no pydantic class.

A generated ``Tools`` class subclasses :class:`ToolsBase` (``AsyncTools`` subclasses
:class:`AsyncToolsBase`). Each typed method builds the wire arguments and calls
``self._call(INFO, arguments)``, which

1. drops the optional arguments the caller did not pass (their value is :data:`NOT_GIVEN`, the
   default of every optional parameter; ``None`` is a value, sent as JSON ``null``, and the
   parameter's type allows it only where the schema allows null),
2. asks ``confirm`` first when the tool is destructive and that option is set,
3. calls ``provider.call_tool(tool_name, arguments)`` (or ``acall_tool``), forwarding a call
   option only when the callable that finally receives it declares it or takes ``**kwargs``,
4. normalizes whatever came back by the contract's one envelope rule (``_rules.py`` beside this
   package, a verbatim copy of the runtime's), retries a read-only idempotent tool on
   ``unavailable``/``timeout`` when ``retries`` is set, answers ``input_required`` rounds with
   ``on_input``,
5. raises the :class:`ToolError` subclass of the failure kind, or decodes the envelope into a
   :class:`ToolResult`: a validated output model, or a :class:`ToolOutput` with content blocks
   for tools without an output schema.

One concern per module:

- ``_options``: the provider protocols and the call options.
- ``_info``: ``ToolInfo``, what a method knows about its tool, and the lazy model loader.
- ``_omit``: ``NOT_GIVEN``, the default of every optional parameter, and what it leaves out.
- ``_text``: an envelope's content read as plain data (standard library only).
- ``_envelope``: ``ToolEnvelope``, the whole result in the contract's dict form.
- ``_content``: the content blocks and ``ToolOutput`` (pydantic; imported on first use, and
  named here lazily).
- ``_errors``: the error tree (``ToolError``; ``ToolFailedError`` and one class per failure kind).
- ``_input``: the requests of an input round (MCP ``input_required``).
- ``_plan``: one call's plan: input rounds, retries, confirmation.
- ``_decode``: ``ToolResult``, and decoding an envelope into one.
- ``_base``: the base classes of ``Tools`` and ``AsyncTools``.
- ``_task``: ``ToolTask`` and ``AsyncToolTask``, typed handles of long-running calls (``.tasks``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._base import (
    AsyncToolsBase,
    AsyncToolsResultsBase,
    AsyncToolsTasksBase,
    ToolsBase,
    ToolsResultsBase,
    ToolsTasksBase,
)
from ._decode import ToolResult, decode_inferred, decode_result, inferred_candidate, normalize_envelope
from ._envelope import ToolEnvelope
from ._errors import (
    ToolArgumentsError,
    ToolCallError,
    ToolCancelledError,
    ToolError,
    ToolFailedError,
    ToolInputRequiredError,
    ToolNotFoundError,
    ToolOutputValidationError,
    ToolProtocolError,
    ToolTimeoutError,
    ToolTransientError,
    ToolUnavailableError,
)
from ._info import ToolInfo, lazy_models
from ._input import ElicitationRequest, InputRequest, RootsRequest, SamplingRequest
from ._omit import NOT_GIVEN, NotGiven
from ._options import (
    CALL_OPTION_NAMES,
    MAX_INPUT_ROUNDS,
    PACKAGE_OPTION_NAMES,
    CallOptions,
    SupportsAsyncCallTool,
    SupportsCallTool,
)
from ._task import AsyncToolTask, TaskStatus, ToolTask

if TYPE_CHECKING:
    from ._content import (
        Annotations,
        AudioContent,
        BlobResourceContents,
        ContentBlock,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
        TextResourceContents,
        ToolOutput,
        UnknownContent,
    )

__all__ = [
    "CALL_OPTION_NAMES",
    "Annotations",
    "AsyncToolTask",
    "AsyncToolsBase",
    "AsyncToolsResultsBase",
    "AsyncToolsTasksBase",
    "AudioContent",
    "BlobResourceContents",
    "CallOptions",
    "ContentBlock",
    "ElicitationRequest",
    "EmbeddedResource",
    "ImageContent",
    "InputRequest",
    "MAX_INPUT_ROUNDS",
    "NOT_GIVEN",
    "NotGiven",
    "PACKAGE_OPTION_NAMES",
    "ResourceLink",
    "RootsRequest",
    "SamplingRequest",
    "SupportsAsyncCallTool",
    "SupportsCallTool",
    "TextContent",
    "TaskStatus",
    "TextResourceContents",
    "ToolArgumentsError",
    "ToolCallError",
    "ToolCancelledError",
    "ToolEnvelope",
    "ToolError",
    "ToolFailedError",
    "ToolInfo",
    "ToolInputRequiredError",
    "ToolNotFoundError",
    "ToolOutput",
    "ToolOutputValidationError",
    "ToolProtocolError",
    "ToolResult",
    "ToolTimeoutError",
    "ToolTransientError",
    "ToolUnavailableError",
    "ToolTask",
    "ToolsBase",
    "ToolsResultsBase",
    "ToolsTasksBase",
    "UnknownContent",
    "decode_inferred",
    "decode_result",
    "inferred_candidate",
    "lazy_models",
    "normalize_envelope",
]

#: The pydantic classes, named here but imported from ``_content`` when first asked for.
LAZY_NAMES = (
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "ResourceLink",
    "TextContent",
    "TextResourceContents",
    "ToolOutput",
    "UnknownContent",
)

if not TYPE_CHECKING:  # type checkers see the imports above; a module __getattr__ would hide typos
    __getattr__ = lazy_models(__name__, dict.fromkeys(LAZY_NAMES, "_content"))
