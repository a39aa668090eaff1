"""``ToolInfo``: what a generated method knows about its tool; ``lazy_models``: models on first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from .. import _rules

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["ToolInfo", "lazy_models"]

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolInfo(Generic[T]):
    """What a generated method needs to know about one tool; ``T`` is the method's value type."""

    name: str
    """The wire name sent to ``call_tool``."""
    method: str
    """The Python method name in the generated package."""
    namespace: str | None
    title: str | None
    description: str
    input_ref: type[Any] | str
    """The generated TypedDict of the arguments, or its name in ``<package>.inputs``."""
    output_ref: type[BaseModel] | str | None
    """The output model, or its name in ``<package>.outputs``; None: the value is a ToolOutput."""
    output_is_root: bool
    """True when ``output_model`` is a RootModel whose ``.root`` is the value."""
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None
    package: str | None = None
    """The generated package; models named by string are imported from it on first use, so a
    package of a thousand tools imports without building a thousand pydantic models."""
    inferred_from: int = 0
    """How many recorded results the output type was inferred from; 0 when it was declared (or the
    tool is untyped). An inferred type is a guess: a result that does not fit it decodes as a
    :class:`ToolOutput` instead of raising (see ``decode_inferred``)."""
    output_is_text: bool = False
    """True when the inferred value is the result's text (every recorded result was one text block)."""
    output_key: str | None = None
    """The output model's one field whose value is the method's value: FastMCP wraps a plain value
    (``str``, ``int``, a list...) as ``{"result": value}`` and marks its output schema
    ``x-fastmcp-wrap-result``; the method returns the value itself. None: the model is the value."""
    # The output model named by string, once imported (None until then): a call imports nothing.
    _output: object = field(default=None, init=False, repr=False, compare=False)

    def _import(self, module: str, name: str) -> type[Any]:
        if self.package is None:
            raise TypeError(f"tool {self.name!r}: a model named by string needs ToolInfo.package")
        model: type[Any] = getattr(importlib.import_module(f"{self.package}.{module}"), name)
        return model

    @property
    def input_model(self) -> type[Any]:
        """The generated TypedDict of the arguments."""
        ref = self.input_ref
        return self._import("inputs", ref) if isinstance(ref, str) else ref

    @property
    def output_model(self) -> type[BaseModel] | None:
        """The generated output model; None when the tool has no output schema."""
        resolved = self._output
        if resolved is not None:  # resolved before: skip the import machinery on every call
            return cast("type[BaseModel]", resolved)
        ref = self.output_ref
        if not isinstance(ref, str):
            return ref
        from pydantic import BaseModel  # here: a package imports pydantic on its first decode

        model = self._import("outputs", ref)
        if not issubclass(model, BaseModel):
            raise TypeError(f"tool {self.name!r}: {self.package}.outputs.{ref} is not a pydantic model")
        object.__setattr__(self, "_output", model)  # frozen: the cache is not part of the value
        return model

    @property
    def hints(self) -> tuple[str, ...]:
        """The declared behaviour hints in words, e.g. ``("read-only", "closed-world")``."""
        return _rules.hint_words({key: getattr(self, key) for key, _, _ in _rules.HINT_WORDS})


def lazy_models(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) that imports ``where[name]`` when ``name`` is first asked for.

    A generated ``outputs`` package names each model's module (one per tool) with it, so a call
    builds only its own tool's models; ``_runtime/__init__.py`` and the package's ``__init__.py``
    name the shim's pydantic classes with it, so an import builds none."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__
