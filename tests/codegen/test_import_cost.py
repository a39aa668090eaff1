"""Importing a generated package builds no model and loads nothing heavy; a call loads what it needs.

Run in a fresh interpreter each, since what matters is what an import leaves in ``sys.modules``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from gen_helpers import REPO

_PROBE = """
import json, sys
import sample_tools
heavy = ("asyncio", "logging", "pydantic", "sample_tools.outputs", "sample_tools.inputs",
         "sample_tools._runtime._content")
after_import = {"heavy": sorted(m for m in heavy if m in sys.modules)}
sample_tools.ToolOutput  # a pydantic class, named lazily: now its module is imported
from pydantic import BaseModel
after_import["defined"] = sorted(
    c.__name__ for c in BaseModel.__subclasses__() if c.__module__.startswith("sample_tools")
)
after_import["built"] = sorted(
    c.__name__ for c in BaseModel.__subclasses__()
    if c.__module__.startswith("sample_tools") and c.__pydantic_complete__
)
print(json.dumps(after_import))
"""


def test_import_builds_no_model_and_loads_no_pydantic() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(REPO / "generated")}
    proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    # Before ToolOutput is named, nothing of pydantic is loaded; naming it defines the content
    # models (deferred: their schemas are built on first validation).
    blocks = ["Annotations", "AudioContent", "BlobResourceContents", "EmbeddedResource", "ImageContent",
              "ResourceLink", "TextContent", "TextResourceContents", "ToolOutput", "UnknownContent"]  # fmt: skip
    assert seen == {"heavy": [], "defined": blocks, "built": []}


_CALL = """
import sys
import sample_tools
from sample_tools._runtime import ToolInfo, ToolsBase, decode_result

info = ToolInfo(name="t", method="t", namespace=None, title=None, description="", input_ref=dict,
                output_ref=None, output_is_root=False)
blocks = [{"type": "text", "text": "hi"}, {"type": "image", "data": "", "mimeType": "image/png"}]
result = decode_result(info, {"content": blocks})
kinds = [type(b).__name__ for b in result.content]
print(type(result.value).__name__, result.value.text, kinds, "asyncio" in sys.modules)
"""


def test_deferred_content_models_still_decode() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(REPO / "generated")}
    proc = subprocess.run([sys.executable, "-c", _CALL], capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ToolOutput", "hi", "['TextContent',", "'ImageContent']", "False"]


_ONE_TOOL = """
import sys
import sample_tools

class Provider:
    def call_tool(self, tool_name, arguments):
        value = {"city": arguments["city"], "conditions": "sunny", "humidity": 40, "temperature": 21.5}
        return {"structured_content": value, "is_error": False}

weather = sample_tools.Tools(Provider()).sample.get_weather(city="Paris")
print(type(weather).__name__, weather.temperature)
print(sorted(m for m in sys.modules if m.startswith("sample_tools.outputs")))
from sample_tools.outputs import SampleWhoamiOutput  # still importable by name, from its own module
print(SampleWhoamiOutput.__module__)
"""


def test_a_call_builds_only_its_own_tools_models() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(REPO / "generated")}
    proc = subprocess.run([sys.executable, "-c", _ONE_TOOL], capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == "SampleGetWeatherOutput 21.5"
    assert lines[1] == "['sample_tools.outputs', 'sample_tools.outputs.sample_get_weather_output']"
    assert lines[2] == "sample_tools.outputs.sample_whoami_output"
