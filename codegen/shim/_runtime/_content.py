"""The content blocks and ``ToolOutput``: pydantic models, imported on a package's first decode.

Nothing imports this module when a generated package is imported (``_runtime/__init__.py`` names
its classes lazily), so an import builds no pydantic class; the schemas are built on first use.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter, ValidationError

from ._errors import ToolOutputValidationError
from ._text import as_list, block_tag, joined_text

if TYPE_CHECKING:
    from ._info import ToolInfo

# No __all__: the names users see are listed once, as ``LAZY_NAMES`` in ``__init__.py``.

# Schemas built on first validation: naming a class (isinstance, an annotation) builds nothing.
_MODEL_CONFIG = ConfigDict(populate_by_name=True, extra="allow", defer_build=True)


def _meta_field() -> Any:
    return Field(default=None, validation_alias="_meta", serialization_alias="_meta")


class Annotations(BaseModel):
    """Optional audience/priority annotations of a content block."""

    model_config = _MODEL_CONFIG

    audience: list[str] | None = None
    priority: float | None = None
    last_modified: str | None = Field(default=None, validation_alias="lastModified", serialization_alias="lastModified")


class TextContent(BaseModel):
    model_config = _MODEL_CONFIG

    type: Literal["text"] = "text"
    text: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = _meta_field()


class ImageContent(BaseModel):
    model_config = _MODEL_CONFIG

    type: Literal["image"] = "image"
    data: str
    """Base64-encoded image bytes."""
    mime_type: str = Field(validation_alias="mimeType", serialization_alias="mimeType")
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = _meta_field()


class AudioContent(BaseModel):
    model_config = _MODEL_CONFIG

    type: Literal["audio"] = "audio"
    data: str
    """Base64-encoded audio bytes."""
    mime_type: str = Field(validation_alias="mimeType", serialization_alias="mimeType")
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = _meta_field()


class ResourceLink(BaseModel):
    model_config = _MODEL_CONFIG

    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = Field(default=None, validation_alias="mimeType", serialization_alias="mimeType")
    size: int | None = None
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = _meta_field()


class TextResourceContents(BaseModel):
    model_config = _MODEL_CONFIG

    uri: str
    mime_type: str | None = Field(default=None, validation_alias="mimeType", serialization_alias="mimeType")
    text: str
    meta: dict[str, Any] | None = _meta_field()


class BlobResourceContents(BaseModel):
    model_config = _MODEL_CONFIG

    uri: str
    mime_type: str | None = Field(default=None, validation_alias="mimeType", serialization_alias="mimeType")
    blob: str
    """Base64-encoded bytes."""
    meta: dict[str, Any] | None = _meta_field()


class EmbeddedResource(BaseModel):
    model_config = _MODEL_CONFIG

    type: Literal["resource"] = "resource"
    resource: TextResourceContents | BlobResourceContents
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = _meta_field()


class UnknownContent(BaseModel):
    """A content block of a type this package does not know; its fields are kept as extras."""

    model_config = _MODEL_CONFIG

    type: str


ContentBlock: TypeAlias = Annotated[
    Annotated[TextContent, Tag("text")]
    | Annotated[ImageContent, Tag("image")]
    | Annotated[AudioContent, Tag("audio")]
    | Annotated[ResourceLink, Tag("resource_link")]
    | Annotated[EmbeddedResource, Tag("resource")]
    | Annotated[UnknownContent, Tag("unknown")],
    Discriminator(block_tag),
]
"""One MCP content block, chosen by its ``type``; unknown types decode as :class:`UnknownContent`."""

CONTENT_LIST: TypeAdapter[list[ContentBlock]] = TypeAdapter(list[ContentBlock], config=ConfigDict(defer_build=True))


def _no_blocks() -> list[ContentBlock]:
    return []


class ToolOutput(BaseModel):
    """The value of a tool without an output schema: its content blocks and structured content."""

    model_config = ConfigDict(populate_by_name=True, defer_build=True)

    content: list[ContentBlock] = Field(default_factory=_no_blocks)
    structured_content: Any = Field(
        default=None, validation_alias="structuredContent", serialization_alias="structuredContent"
    )

    @property
    def text(self) -> str:
        """The text blocks joined with newlines ("" when there are none)."""
        return joined_text(list(self.content)) or ""


def tool_output(info: ToolInfo[Any], envelope: Mapping[str, Any]) -> ToolOutput:
    """The value of a tool without an output schema (a plain ``result`` becomes one text block)."""
    blocks = as_list(envelope.get("content")) or []
    result = envelope.get("result")
    if not blocks and result is not None:
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
        blocks = [{"type": "text", "text": text}]
    try:
        return ToolOutput(
            content=CONTENT_LIST.validate_python(blocks), structured_content=envelope.get("structured_content")
        )
    except ValidationError as exc:
        raise ToolOutputValidationError(
            info.name, ToolOutput, errors=[dict(e) for e in exc.errors()], raw=blocks, envelope=envelope
        ) from exc
