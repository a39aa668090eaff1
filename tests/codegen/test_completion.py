"""Editor experience of a generated package, checked with real jedi (what IPython and many editors use).

Two packages are generated once per module into a temporary folder that jedi gets as its project
and sys.path: ``captures`` (all six tools/list captures, one namespace per server) and ``samples``
(the sample ``kind: Tool`` YAML: one source, still under its namespace ``skills``). Nothing is
mocked: jedi reads the generated source the way an editor would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import jedi
import pydantic
import pytest
from jedi.api.classes import BaseName

from codegen.cli import main as toolgen

pytestmark = pytest.mark.full  # jedi reads the generated package as an editor does (the full tier)

REPO = Path(__file__).resolve().parents[2]
CAPTURES = sorted((REPO / "tests" / "fixtures" / "mcp-tools-list").glob("*.json"))
SAMPLE_TOOLS = REPO / "library-samples" / "tools"

HEAD = """\
from captures import AsyncTools, Tools
from samples import Tools as SampleTools

tools = Tools(provider)
atools = AsyncTools(provider)
one = SampleTools(provider)
skills = one.skills
"""


class Editor:
    """A jedi project over the generated packages; each query is code that ends where the cursor is."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.project = jedi.Project(path=root, added_sys_path=[str(root)])
        self.environment = jedi.InterpreterEnvironment()

    def _script(self, code: str) -> tuple[jedi.Script, int, int]:
        source = HEAD + code
        lines = source.split("\n")
        script = jedi.Script(source, path=self.root / "user.py", project=self.project, environment=self.environment)
        return script, len(lines), len(lines[-1])

    def completions(self, code: str) -> list[jedi.api.classes.Completion]:
        script, line, column = self._script(code)
        return list(script.complete(line, column))

    def complete(self, code: str) -> list[str]:
        return [c.name for c in self.completions(code)]

    def public(self, code: str) -> list[str]:
        return sorted(name for name in self.complete(code) if not name.startswith("_"))

    def infer(self, code: str) -> list[BaseName]:
        script, line, column = self._script(code)
        return list(script.infer(line, column))

    def inferred(self, code: str) -> list[tuple[str, str | None, str]]:
        return [(d.name, d.full_name, d.type) for d in self.infer(code)]

    def signatures(self, code: str) -> list[jedi.api.classes.Signature]:
        script, line, column = self._script(code)
        return list(script.get_signatures(line, column))


#: The per-tool module of the outputs package that holds get_current_time's model.
TIME_MODULE = "captures.outputs.time_get_current_time_output"


def _generate(out: Path, package: str, sources: list[str]) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(out)  # no pyproject.toml above a temporary folder: only the flags below count
        assert toolgen(["generate", "--out", str(out), "--package", package, *sources]) == 0


@pytest.fixture(scope="module")
def editor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Editor]:
    root = tmp_path_factory.mktemp("completion")
    _generate(root, "captures", [arg for path in CAPTURES for arg in ("--mcp-json", str(path))])
    _generate(root, "samples", ["--tools", str(SAMPLE_TOOLS)])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(jedi.settings, "cache_directory", str(tmp_path_factory.mktemp("jedi-cache")))
        yield Editor(root)


def _fields_only(names: list[str]) -> list[str]:
    """Completions minus what every pydantic model has."""
    return sorted(n for n in names if not n.startswith("_") and n not in dir(pydantic.BaseModel))


# --- completion -----------------------------------------------------------------------------------


def test_tools_lists_the_namespaces(editor: Editor) -> None:
    assert editor.public("tools.") == [
        "everything", "fetch", "filesystem", "git", "memory", "results", "tasks", "time", "with_options",
    ]  # fmt: skip


def test_a_namespace_lists_its_methods(editor: Editor) -> None:
    assert editor.public("tools.time.") == ["convert_time", "get_current_time", "results", "tasks", "with_options"]
    assert editor.public("tools.git.git_d") == ["git_diff", "git_diff_staged", "git_diff_unstaged"]


def test_one_source_still_sits_under_its_namespace(editor: Editor) -> None:
    assert editor.public("one.") == ["results", "skills", "tasks", "with_options"]
    assert editor.public("skills.") == [
        "current_time", "results", "summarize_text", "tasks", "unit_convert", "web_search", "with_options",
    ]  # fmt: skip


def test_method_name_completes(editor: Editor) -> None:
    assert editor.complete("tools.time.get_current_") == ["get_current_time"]
    assert editor.complete("tools.everything.get_annotated_") == ["get_annotated_message"]  # wire name has "-"


def test_keyword_argument_completes(editor: Editor) -> None:
    assert editor.complete("tools.time.get_current_time(tim") == ["timezone="]


# --- signature help -------------------------------------------------------------------------------


def test_signature_help_shows_the_keyword_parameter(editor: Editor) -> None:
    (signature,) = editor.signatures("tools.time.get_current_time(")
    assert signature.name == "get_current_time"
    assert [(p.name, p.kind.name, p.description) for p in signature.params] == [
        ("timezone", "KEYWORD_ONLY", "param timezone: str")
    ]
    assert signature.to_string() == "get_current_time(*, timezone: str) -> _o.TimeGetCurrentTimeOutput"


def test_signature_help_shows_python_names_literals_and_defaults(editor: Editor) -> None:
    (signature,) = editor.signatures("tools.everything.get_annotated_message(")
    assert signature.to_string() == (
        'get_annotated_message(*, message_type: Literal["error", "success", "debug"],'
        " include_image: bool | _NotGiven=_NOT_GIVEN) -> _ToolOutput"
    )
    # An omitted parameter is not sent (the omission sentinel), so the server's default is named in
    # the docstring the editor shows beside the signature, not as a Python default.
    assert "include_image: Whether to include an example image (server default: False)" in signature.docstring()
    (signature,) = editor.signatures("skills.current_time(")
    assert (
        signature.to_string() == "current_time(*, at: str | _NotGiven=_NOT_GIVEN, timezone: str | _NotGiven=_NOT_GIVEN)"
        " -> _o.SkillsCurrentTimeOutput"
    )
    assert '(server default: "UTC")' in signature.docstring()


# --- inferred types -------------------------------------------------------------------------------


def test_result_is_the_generated_output_model(editor: Editor) -> None:
    assert editor.inferred('tools.time.get_current_time(timezone="UTC")') == [
        (
            "TimeGetCurrentTimeOutput",
            "captures.outputs.time_get_current_time_output.TimeGetCurrentTimeOutput",
            "instance",
        )
    ]
    assert editor.inferred('tools.time.get_current_time(timezone="UTC").is_dst') == [
        ("bool", "builtins.bool", "instance")
    ]
    assert editor.inferred("skills.current_time()") == [
        ("SkillsCurrentTimeOutput", "samples.outputs.skills_current_time_output.SkillsCurrentTimeOutput", "instance")
    ]


def test_output_model_fields_complete(editor: Editor) -> None:
    fields = _fields_only(editor.complete('now = tools.time.get_current_time(timezone="UTC")\nnow.'))
    assert fields == ["datetime", "day_of_week", "is_dst", "timezone"]
    nested = _fields_only(
        editor.complete('tools.time.convert_time(source_timezone="UTC", target_timezone="UTC", time="1:00").source.')
    )
    assert nested == ["datetime", "day_of_week", "is_dst", "timezone"]


def test_tool_without_output_schema_gives_tool_output(editor: Editor) -> None:
    assert editor.inferred('tools.everything.echo(message="hi")') == [
        ("ToolOutput", "captures._runtime._content.ToolOutput", "instance")
    ]
    assert editor.inferred('tools.everything.echo(message="hi").text') == [("str", "builtins.str", "instance")]


def test_results_flavour_and_async_flavour(editor: Editor) -> None:
    assert editor.inferred('tools.results.time.get_current_time(timezone="UTC")') == [
        ("ToolResult", "captures._runtime._decode.ToolResult", "instance")
    ]
    assert editor.inferred('tools.results.time.get_current_time(timezone="UTC").value') == [
        (
            "TimeGetCurrentTimeOutput",
            "captures.outputs.time_get_current_time_output.TimeGetCurrentTimeOutput",
            "instance",
        )
    ]
    code = 'async def f():\n    now = await atools.time.get_current_time(timezone="UTC")\n    now'
    assert editor.inferred(code) == [
        (
            "TimeGetCurrentTimeOutput",
            "captures.outputs.time_get_current_time_output.TimeGetCurrentTimeOutput",
            "instance",
        )
    ]


# --- docstrings -----------------------------------------------------------------------------------


def test_method_docstring_has_description_args_and_hints(editor: Editor) -> None:
    (definition,) = editor.infer("tools.time.get_current_time")
    capture = json.loads((REPO / "tests" / "fixtures" / "mcp-tools-list" / "time.json").read_text(encoding="utf-8"))
    tool = next(t for t in capture["tools"] if t["name"] == "get_current_time")
    description = tool["description"]
    timezone_doc = tool["inputSchema"]["properties"]["timezone"]["description"]
    assert definition.docstring(raw=True) == (
        f"{description}\n\nArgs:\n    timezone: {timezone_doc}\n\n"
        "Hints: read-only, not destructive, idempotent, closed-world.\n\n"
        "Wire name: 'get_current_time'."
    )
    # What a hover shows: the signature, then the docstring.
    assert definition.docstring().startswith("get_current_time(*, timezone: str) -> _o.TimeGetCurrentTimeOutput\n\n")


def test_completion_item_docstring_uses_the_title(editor: Editor) -> None:
    (item,) = editor.completions("skills.unit_conv")
    doc = item.docstring(raw=True)
    assert doc.startswith("Unit converter\n\nConvert a quantity between units of length")
    assert "\n\nHints: read-only, idempotent, closed-world.\n\nWire name: 'unit_convert'." in doc
