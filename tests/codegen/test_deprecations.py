"""PEP 702 deprecations at run time and in the text: a tool the server marks ``deprecated: true``
warns when called and still calls; docstrings and api.md say what is deprecated. What mypy and
pyright report at the call sites (and nowhere else) is in the typing snapshots of
tests/codegen/test_typecheck.py (package ``upgraded``, script ``cases/typecheck/bad_upgraded.py``).

The package is generated from ``tests/fixtures/upgrades/deprecations.json``: ``search`` has a
deprecated optional parameter (``limit``), ``old_lookup`` is deprecated whole (``deprecated: true``
on its input schema), ``current`` is not.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from gen_helpers import REPO, black_agrees, generate

FIXTURE = REPO / "tests" / "fixtures" / "upgrades" / "deprecations.json"


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("deprecations")
    mp = pytest.MonkeyPatch()
    try:
        assert generate(root, ["--mcp-json", f"idx={FIXTURE}", "--out", ".", "--package", "dep", "--no-cache"], mp) == 0
    finally:
        mp.undo()
    return root


def test_a_deprecated_method_warns_when_called_and_still_calls(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(package))
    for name in [m for m in sys.modules if m == "dep" or m.startswith("dep.")]:
        monkeypatch.delitem(sys.modules, name)
    from dep import Tools  # type: ignore[import-not-found]

    sent: list[tuple[str, Any]] = []

    class Provider:
        def call_tool(self, tool_name: str, arguments: Any, **_: Any) -> dict[str, Any]:
            sent.append((tool_name, dict(arguments)))
            return {"status": "success", "result": "found", "metadata": {}}

    tools = Tools(Provider())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tools.idx.old_lookup(key="k")
        tools.idx.current(key="a")
    assert [str(w.message) for w in caught] == ["tool 'old_lookup' is deprecated by its server"]
    assert [name for name, _ in sent] == ["old_lookup", "current"]


def test_the_docstrings_the_api_page_and_the_layout_say_so(package: Path) -> None:
    tools = (package / "dep" / "_tools.py").read_text(encoding="utf-8")
    assert "Deprecated: the server marks this tool deprecated" in tools
    assert "limit: Use page_size. (deprecated by the server)" in tools
    assert black_agrees(tools)
    api = (package / "dep" / "api.md").read_text(encoding="utf-8")
    assert "# Look a key up (use search). [deprecated]" in api
    assert "# Search the index. [deprecated parameter(s): limit]" in api
