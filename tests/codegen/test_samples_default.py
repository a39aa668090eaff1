"""The samples file (issue 16, item 4): one default, ``toolgen.samples.json``, read by every command.

Outside a configured project ``record`` writes it and ``generate``, ``generate --offline --check``
and ``diff`` read it without ``--samples``; a configured samples file that does not exist yet is no
samples, not an error; one named on the command line must exist. Against the real sample server.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp_helpers import sample_stdio_infra

from codegen.cli import main as toolgen

INFRA = Path(sample_stdio_infra())
EXAMPLES = "- tool: list_cities\n- tool: list_cities\n  arguments: {country: FR}\n"


def _toolgen(cwd: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd)
        code = toolgen(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_record_writes_the_default_file_and_generate_check_and_diff_read_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "examples.yaml").write_text(EXAMPLES, encoding="utf-8")
    code, out, err = _toolgen(tmp_path, ["record", "--examples", "examples.yaml", "--infra", str(INFRA)], capsys)
    assert (code, out) == (0, "toolgen: toolgen.samples.json: 2 result(s) recorded\n"), err
    live = ["--infra", str(INFRA), "--out", "out", "--package", "pkg"]
    code, out, err = _toolgen(tmp_path, ["generate", *live, "-q"], capsys)
    assert code == 0, err
    assert "toolgen: typed results: declared 6, inferred 1, untyped 2\n" in out  # list_cities, from the default
    code, out, err = _toolgen(tmp_path, ["generate", *live, "--offline", "--check"], capsys)
    assert (code, out) == (0, "toolgen: out/pkg is up to date\n"), err
    code, out, err = _toolgen(tmp_path, ["diff", "--infra", str(INFRA), "-q"], capsys)
    assert code == 0, out + err  # not "inferred output schema removed" for every recorded tool
    assert "removed" not in out


@pytest.mark.full  # live records and generations; the other test here stays fast
def test_a_configured_samples_file_that_does_not_exist_yet_is_no_samples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.toolgen]\ninfra = ["{INFRA}"]\nsamples = ["toolgen.samples.json"]\nout = "gen"\npackage = "cfg"\n'
    )
    code, out, err = _toolgen(tmp_path, ["generate", "-q"], capsys)
    assert code == 0, err
    assert "toolgen: typed results: declared 6, inferred 0, untyped 3\n" in out
    (tmp_path / "examples.yaml").write_text(EXAMPLES, encoding="utf-8")
    code, out, err = _toolgen(tmp_path, ["record", "--examples", "examples.yaml"], capsys)  # the configured file
    assert (code, out) == (0, "toolgen: toolgen.samples.json: 2 result(s) recorded\n"), err
    code, out, err = _toolgen(tmp_path, ["generate", "--offline", "--check"], capsys)
    assert code == 1, out + err  # the samples now type list_cities: stale until generated again
    code, out, err = _toolgen(tmp_path, ["generate", "-q"], capsys)
    assert "toolgen: typed results: declared 6, inferred 1, untyped 2\n" in out, err


def test_a_samples_file_named_on_the_command_line_must_exist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "t.json").write_text('{"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}')
    args = ["generate", "--mcp-json", "t.json", "--samples", "typo.json", "--out", "out"]
    code, out, err = _toolgen(tmp_path, args, capsys)
    assert code == 2
    assert err.splitlines() == ["toolgen: error: typo.json: cannot read: No such file or directory"]
