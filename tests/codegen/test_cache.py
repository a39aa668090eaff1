"""The cache never serves a stale file: cached output is byte-identical to a cold run.

Hypothesis edits a small real catalog at random (descriptions, property types, new properties,
output schemas, renamed and removed tools); after each edit the package is generated through
one shared cache and again cold with ``--no-cache``, and the two trees must be equal byte for
byte. Other tests show what the cache saves: an up-to-date ``--check`` loads neither the formatter nor
datamodel-code-generator, and a changed description regenerates no model module.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest
from gen_helpers import REPO, generate, tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiers import examples

from codegen import datamodels
from codegen.cache import Cache
from codegen.emit import render

CAPTURES = REPO / "tests" / "fixtures" / "mcp-tools-list"
ARGS = ["--mcp-json", "tools.json", "--out", "out", "--package", "pkg"]


def _base() -> list[dict[str, Any]]:
    """Four real tools: two with output schemas, one with ``$defs``."""
    memory = json.loads((CAPTURES / "memory.json").read_text())["tools"]
    time = json.loads((CAPTURES / "time.json").read_text())["tools"]
    return [*memory[:2], *time]


def _edit(tools: list[dict[str, Any]], kind: str, index: int, word: str) -> None:
    tool = tools[index % len(tools)]
    props = tool["inputSchema"].setdefault("properties", {})
    if kind == "description":
        tool["description"] = f"{tool.get('description', '')} {word}"
    elif kind == "add_property":
        props[f"p_{word}"] = {"type": "string", "description": word}
    elif kind == "retype_property" and props:
        first = sorted(props)[0]
        props[first] = {"type": "integer"} if props[first].get("type") != "integer" else {"type": "string"}
    elif kind == "output_schema":
        tool["outputSchema"] = {"type": "object", "properties": {word: {"type": "number"}}, "required": [word]}
    elif kind == "drop_output":
        tool.pop("outputSchema", None)
    elif kind == "rename":
        tool["name"] = f"{tool['name']}_{word}"
    elif kind == "remove" and len(tools) > 1:
        tools.remove(tool)
    elif kind == "property_description" and props:  # the prepared schema stays; the docstring changes
        props[sorted(props)[-1]]["description"] = word
    elif kind == "title":
        tool["title"] = word.title()
    elif kind == "hints":
        tool["annotations"] = {"readOnlyHint": word != "alpha", "destructiveHint": word == "gamma"}


EDITS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "description",
                "add_property",
                "retype_property",
                "output_schema",
                "drop_output",
                "rename",
                "remove",
                "property_description",
                "title",
                "hints",
            ]  # fmt: skip
        ),
        st.integers(0, 7),
        st.sampled_from(["alpha", "beta", "gamma"]),
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=examples(4, 12), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=EDITS)
def test_cached_output_is_byte_identical_to_a_cold_run(
    edits: list[tuple[str, int, str]], tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two tools per input run: the four tools make two groups, which edits rename and remove tools
    # across (datamodels.input_group). One project folder, and its cache, across every example:
    # later examples hit what earlier ones stored, which is exactly when a stale entry would show.
    monkeypatch.setattr(datamodels, "INPUT_GROUP_TOOLS", 2)
    warm = tmp_path_factory.getbasetemp() / "warm"
    warm.mkdir(exist_ok=True)
    cold = tmp_path_factory.mktemp("cold")
    tools = copy.deepcopy(_base())
    for kind, index, word in edits:
        _edit(tools, kind, index, word)
    text = json.dumps({"tools": tools})
    for folder in (warm, cold):
        (folder / "tools.json").write_text(text)
    assert generate(warm, ARGS, monkeypatch) == 0
    assert generate(cold, [*ARGS, "--no-cache"], monkeypatch) == 0
    assert not (cold / ".toolgen-cache").exists()
    assert tree(warm / "out" / "pkg") == tree(cold / "out" / "pkg")
    # The same inputs a second time come from the cache, and still equal the cold run.
    assert generate(warm, ARGS, monkeypatch) == 0
    assert generate(warm, [*ARGS, "--check"], monkeypatch) == 0
    assert tree(warm / "out" / "pkg") == tree(cold / "out" / "pkg")


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "tools.json").write_text(json.dumps({"tools": _base()}))
    assert generate(tmp_path, ARGS, monkeypatch) == 0
    return tmp_path


def _inodes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_ino for p in root.rglob("*") if p.is_file()}


def test_an_edit_rewrites_only_the_files_it_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``__init__.py`` alone names the inputs' hash, so a description edit changes three files (that
    header, the method's docstring and ToolInfo, and the code-mode stub, which keeps the
    description after the tool's title; stubs are not formatted); the rest
    keep their bytes and their very inode (staged as hard links, not written again), and only the
    changed modules are formatted."""
    project = _project(tmp_path, monkeypatch)
    package = project / "out" / "pkg"
    before, inodes = tree(package), _inodes(package)
    tools = _base()
    tools[0]["description"] = "A new description. Of the first tool."
    (project / "tools.json").write_text(json.dumps({"tools": tools}))
    formatted: list[str] = []
    texts: dict[str, str] = {}
    real = render.format_files

    def counting(files: Any) -> Any:
        formatted.extend(files)
        texts.update(files)
        return real(files)

    monkeypatch.setattr(render, "format_files", counting)
    assert generate(project, ARGS, monkeypatch) == 0
    after = tree(package)
    changed = sorted(name for name in after if after[name] != before.get(name))
    # The test kit's data holds the listing (the description too): written as it is, never formatted.
    assert changed == ["__init__.py", "_testing_data.py", "_tools.py", "code_mode/tools.pyi"]
    # __init__.py differs in its header only, which is not formatted. Of _tools.py, the module
    # around the tools' parts and the edited tool's parts alone: its constant and six methods.
    assert formatted == ["_tools.py", "parts_0.py"]
    assert texts["parts_0.py"].count("# _toolgen_part_") == 7
    assert "A new description." in texts["parts_0.py"]
    kept = _inodes(package)
    assert all(kept[name] == inodes[name] for name in after if name not in changed)
    # The renderer never reads the package back: what the cache layer keeps is keyed by the inputs
    # it was made from. Modules edited by hand (another tool's part of _tools.py, here) are
    # replaced by what the inputs make, and the unchanged ones are still not formatted again.
    shutil.rmtree(project / "cold", ignore_errors=True)
    (package / "inputs.py").write_text((package / "inputs.py").read_text() + "x  =  1\n")
    head, _, tail = (package / "_tools.py").read_text().rpartition("return result.value")
    (package / "_tools.py").write_text(f"{head}return result.value  # edited{tail}")
    tools[0]["description"] = "Another description."
    (project / "tools.json").write_text(json.dumps({"tools": tools}))
    formatted.clear()
    assert generate(project, ARGS, monkeypatch) == 0
    assert formatted == ["_tools.py", "parts_0.py"]
    assert "# edited" not in (package / "_tools.py").read_text()
    cold = tmp_path / "cold"
    cold.mkdir()
    (cold / "tools.json").write_text(json.dumps({"tools": tools}))
    assert generate(cold, [*ARGS, "--no-cache"], monkeypatch) == 0
    assert tree(package) == tree(cold / "out" / "pkg")


def test_a_damaged_entry_is_a_miss_not_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project(tmp_path, monkeypatch)
    expected = tree(project / "out" / "pkg")
    entries = sorted((project / ".toolgen-cache" / "files").glob("*.json"))
    assert len(entries) == 1
    entry = json.loads(entries[0].read_text())
    entry["data"]["_tools.py"] += "# tampered\n"  # the digest no longer matches
    entries[0].write_text(json.dumps(entry))
    (project / "out" / "pkg" / "_tools.py").unlink()
    assert generate(project, ARGS, monkeypatch) == 0
    assert tree(project / "out" / "pkg") == expected


def test_a_changed_description_regenerates_no_model_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project(tmp_path, monkeypatch)
    tools = _base()
    tools[0]["description"] = "A new description."
    (project / "tools.json").write_text(json.dumps({"tools": tools}))
    calls: list[str] = []
    real = datamodels.model_code

    def counting(document: Any, *, kind: str, **more: Any) -> str:
        calls.append(kind)
        return real(document, kind=kind, **more)

    monkeypatch.setattr(datamodels, "model_code", counting)
    assert generate(project, ARGS, monkeypatch) == 0
    assert calls == []  # descriptions are not in the model documents: both modules were cached
    assert "A new description." in (project / "out" / "pkg" / "_tools.py").read_text()
    tools[0]["inputSchema"]["properties"]["extra"] = {"type": "boolean"}
    (project / "tools.json").write_text(json.dumps({"tools": tools}))
    assert generate(project, ARGS, monkeypatch) == 0
    assert calls == ["inputs"]  # the output schemas did not change


def test_an_edited_input_schema_reruns_its_group_only_and_equals_a_cold_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(datamodels, "INPUT_GROUP_TOOLS", 1)  # one tool per input run: four groups
    (tmp_path / "warm").mkdir()
    project = _project(tmp_path / "warm", monkeypatch)
    tools = _base()
    tools[1]["inputSchema"]["properties"]["extra"] = {"type": "array", "items": {"type": "integer"}}
    (project / "tools.json").write_text(json.dumps({"tools": tools}))
    runs: list[tuple[str, tuple[str, ...]]] = []
    real = datamodels.model_code

    def recording(document: Any, *, kind: str, **more: Any) -> str:
        runs.append((kind, tuple(document["$defs"])))
        return real(document, kind=kind, **more)

    monkeypatch.setattr(datamodels, "model_code", recording)
    assert generate(project, ARGS, monkeypatch) == 0
    assert [kind for kind, _ in runs] == ["inputs"]  # one group's run; the outputs were cached
    edited = runs[0][1]  # the group of the edited tool, without the others (hash-placed: some share one)
    assert "ToolsCreateRelationsInput" in edited and sum(name.endswith("Input") for name in edited) < len(tools)
    cold = tmp_path / "cold"
    cold.mkdir()
    (cold / "tools.json").write_text(json.dumps({"tools": tools}))
    assert generate(cold, [*ARGS, "--no-cache"], monkeypatch) == 0
    assert tree(project / "out" / "pkg") == tree(cold / "out" / "pkg")
    assert "extra: NotRequired[list[int]]" in (project / "out" / "pkg" / "inputs.py").read_text()


def test_a_warmed_model_worker_runs_the_edited_group_and_the_output_equals_a_cold_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rerun of a large catalog starts datamodels.ModelWorker first (here: of any catalog); the
    edited group's run is its, not this process's, and the package is the cold run's. A
    description edit gives it nothing to run: the build ends it and runs no model either."""
    if not datamodels._can_fork():
        pytest.skip("no fork here (another thread is alive, or one core)")
    monkeypatch.setattr(datamodels, "WARM_WORKER_TOOLS", 1)
    monkeypatch.setattr(datamodels, "INPUT_GROUP_TOOLS", 1)
    (tmp_path / "warm").mkdir()
    project = _project(tmp_path / "warm", monkeypatch)
    here: list[str] = []
    real = datamodels.model_code

    def recording(document: Any, *, kind: str, **more: Any) -> str:
        here.append(kind)  # the worker's runs append to its own copy of this list
        return real(document, kind=kind, **more)

    monkeypatch.setattr(datamodels, "model_code", recording)
    tools = _base()
    tools[1]["inputSchema"]["properties"]["extra"] = {"type": "array", "items": {"type": "integer"}}
    for edit in ("schema", "description"):
        if edit == "description":
            tools[2]["description"] = "A new description."
        (project / "tools.json").write_text(json.dumps({"tools": tools}))
        assert generate(project, ARGS, monkeypatch) == 0
        assert here == []
        cold = tmp_path / f"cold-{edit}"
        cold.mkdir()
        (cold / "tools.json").write_text(json.dumps({"tools": tools}))
        assert generate(cold, [*ARGS, "--no-cache"], monkeypatch) == 0
        here.clear()
        assert tree(project / "out" / "pkg") == tree(cold / "out" / "pkg")
    assert "extra: NotRequired[list[int]]" in (project / "out" / "pkg" / "inputs.py").read_text()


def test_the_kit_data_is_made_once_while_the_worker_runs_the_edited_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test kit's data needs no model: a build whose edited group goes to the model worker makes
    it after submitting the group and before it waits for the worker's answer (the worker's
    warm-up is most of that wait), once; a build with nothing for the worker makes it once too."""
    from codegen import build

    if not datamodels._can_fork():
        pytest.skip("no fork here (another thread is alive, or one core)")
    monkeypatch.setattr(datamodels, "WARM_WORKER_TOOLS", 1)
    monkeypatch.setattr(datamodels, "INPUT_GROUP_TOOLS", 1)
    project = _project(tmp_path, monkeypatch)
    events: list[str] = []
    real_kit, real_results = build.testing_data, datamodels.ModelWorker.results

    def kit(*args: Any, **kwargs: Any) -> Any:
        events.append("kit")
        return real_kit(*args, **kwargs)

    def results(worker: datamodels.ModelWorker) -> Any:
        events.append("results")
        return real_results(worker)

    monkeypatch.setattr(build, "testing_data", kit)
    monkeypatch.setattr(datamodels.ModelWorker, "results", results)
    tools = _base()
    tools[1]["inputSchema"]["properties"]["extra"] = {"type": "integer"}
    (project / "tools.json").write_text(json.dumps({"tools": tools}))
    assert generate(project, ARGS, monkeypatch) == 0
    assert events == ["kit", "results"]
    events.clear()
    tools[2]["description"] = "A new description."
    (project / "tools.json").write_text(json.dumps({"tools": tools}))
    assert generate(project, ARGS, monkeypatch) == 0
    assert events == ["kit"]
    assert "extra" in (project / "out" / "pkg" / "_testing_data.py").read_text()


def test_an_error_making_the_kit_is_not_taken_for_a_model_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The kit's data is made inside the model step (``meanwhile``); an error there is the kit's:
    the build does not retry its models tool by tool (as for a schema the model generator cannot
    take) but ends with that error, one line, and writes nothing."""
    from codegen import build
    from codegen.errors import GenerateError

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise GenerateError("the kit cannot be made")

    retried: list[str] = []
    monkeypatch.setattr(build, "testing_data", broken)
    monkeypatch.setattr(build._Builder, "untype_failures", lambda self, plan: retried.append(plan.method))
    (tmp_path / "tools.json").write_text(json.dumps({"tools": _base()}))
    assert generate(tmp_path, ARGS, monkeypatch) == 2
    assert retried == [] and not (tmp_path / "out").exists()
    assert "the kit cannot be made" in capsys.readouterr().err


@pytest.mark.parametrize("parallel", [False, True], ids=["one-process", "forked-pool"])
def test_meanwhile_is_called_once_without_a_warmed_worker(parallel: bool) -> None:
    """Outside a cache layer (no worker): after the runs in one process, and while the forked
    pool runs the inputs and the stubs."""
    if parallel and not datamodels._can_fork():
        pytest.skip("no fork here (another thread is alive, or one core)")
    document = {"$defs": {"ToolAInput": {"type": "object", "properties": {"a": {"type": "integer"}}}}}
    outputs = {"$defs": {"ToolAOutput": {"type": "object", "properties": {"b": {"type": "string"}}}}}
    calls: list[int] = []
    ins, outs, stubs = datamodels.generate_models(
        [document], outputs, parallel=parallel, meanwhile=lambda: calls.append(len(calls))
    )
    assert calls == [0]
    assert "class ToolAInput(TypedDict)" in ins.code and "class ToolAOutput(BaseModel)" in outs.code
    assert stubs is not None and "class ToolAOutput(TypedDict)" in stubs.code


def test_model_run_keys_spelled_together_are_each_runs_own() -> None:
    """``_job_keys`` spells a document or a set of names several runs share once: the keys are the
    ones each run gets alone, and each input (document, names, run) still moves its run's key."""
    doc = {"$defs": {"A": {"type": "object"}}}
    other = {"$defs": {"A": {"type": "object", "properties": {"x": {"type": "integer"}}}}}
    names, more = frozenset({"A"}), frozenset({"A", "B"})
    jobs = [
        datamodels._Job("outputs", doc, "outputs", names),
        datamodels._Job(datamodels.STUB_RUN, doc, "inputs", names),
        datamodels._Job("inputs", doc, "inputs", names),
        datamodels._Job("inputs", other, "inputs", names),
        datamodels._Job("inputs", doc, "inputs", more),
    ]
    together = datamodels._job_keys(jobs)
    assert together == [datamodels._job_keys([job])[0] for job in jobs]
    assert len(set(together)) == len(jobs)
    assert datamodels._job_keys([datamodels._Job("inputs", copy.deepcopy(doc), "inputs", frozenset({"A"}))]) == [
        together[2]
    ]


def test_a_memo_table_is_kept_in_shards_and_save_writes_only_the_changed_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large table is ``MEMO_SHARDS`` entries by its keys' first hex digit: a build that changes
    one result rewrites one entry; a damaged entry loses its own results only. A small table is
    one entry, and a table that shrinks leaves no result in the entries it no longer uses."""
    from codegen import cache as cache_module
    from codegen.cache import MEMO_SHARDS, Memo, _memo_entry

    cache = Cache(tmp_path / ".toolgen-cache")
    assert not cache.has_memo("specs", "pkg")
    keys = [cast(str, Memo.key("result", i)) for i in range(64)]
    written: list[str] = []
    real = Cache._write

    def counting(self: Cache, kind: str, key: str, data: object, **more: Any) -> None:
        written.append(key)
        real(self, kind, key, data, **more)

    monkeypatch.setattr(Cache, "_write", counting)
    table = cache.memo("specs", "pkg")
    for i, key in enumerate(keys):
        table.put(key, {"n": i})
    table.save()  # small: one entry
    assert written == [_memo_entry("specs", "pkg", 0)] and cache.has_memo("specs", "pkg")
    monkeypatch.setattr(cache_module, "MEMO_SHARD_BYTES", 0)  # from here on, every table is large
    table = cache.memo("specs", "pkg")
    for key in keys:
        table.get(key)
    written.clear()
    table.save()
    shard = {key: int(key[0], 16) % MEMO_SHARDS for key in keys}
    assert sorted(written) == sorted(_memo_entry("specs", "pkg", n) for n in range(MEMO_SHARDS))
    again = cache.memo("specs", "pkg")
    assert [again.get(key) for key in keys] == [{"n": i} for i in range(64)]
    added = cast(str, Memo.key("result", "new"))
    again.put(added, {"n": "new"})  # every old result used, one added: its entry alone
    written.clear()
    again.save()
    assert written == [_memo_entry("specs", "pkg", int(added[0], 16) % MEMO_SHARDS)]
    # A damaged entry is a miss for the results it holds, and only for those.
    path = tmp_path / ".toolgen-cache" / "memo" / f"{_memo_entry('specs', 'pkg', shard[keys[0]])}.json"
    path.write_text(path.read_text()[:-1] + " }")  # the data as stored changed: its digest no longer matches
    fourth = cache.memo("specs", "pkg")
    assert [fourth.get(key) is not None for key in keys] == [shard[key] != shard[keys[0]] for key in keys]
    # Shrunk to one entry again: the other entries are emptied, so none of their results comes back.
    monkeypatch.setattr(cache_module, "MEMO_SHARD_BYTES", 1 << 20)
    small = cache.memo("specs", "pkg")
    small.get(keys[1])
    small.save()
    assert cache.memo("specs", "pkg").get(keys[2]) is None
    assert cache.memo("specs", "pkg").get(keys[1]) == {"n": 1}


def test_a_changed_description_splits_no_model_code_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from codegen import build

    project = _project(tmp_path, monkeypatch)
    expected = tree(project / "out" / "pkg")
    splits: list[int] = []
    real = build.split_models
    monkeypatch.setattr(build, "split_models", lambda code, roots, **kw: splits.append(1) or real(code, roots, **kw))
    tools = _base()
    tools[0]["description"] = "Another description."
    (project / "tools.json").write_text(json.dumps({"tools": tools}))
    assert generate(project, ARGS, monkeypatch) == 0
    assert splits == []  # the output model code is unchanged: its split came from the cache
    # A damaged split entry is a miss: split again, and the files equal a cold run's.
    (entry,) = (project / ".toolgen-cache" / "splits").glob("*.json")
    data = json.loads(entry.read_text())
    data["data"][0][2] += "# tampered\n"
    entry.write_text(json.dumps(data))
    tools[0]["description"] = _base()[0]["description"]
    (project / "tools.json").write_text(json.dumps({"tools": tools}))
    shutil.rmtree(project / ".toolgen-cache" / "files")
    assert generate(project, ARGS, monkeypatch) == 0
    assert splits == [1] and tree(project / "out" / "pkg") == expected


def test_check_from_the_cache_loads_no_generator_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nor the MCP SDK (about 0.6 s of imports) when no source is a live server and no saved tool
    carries an x-mcp-header annotation, nor the argument validator, rich (no terminal), YAML (no
    YAML source) or asyncio: an up-to-date check reads, hashes and compares."""
    project = _project(tmp_path, monkeypatch)
    heavy = (
        "datamodel_code_generator",
        "jinja2",
        "ruff",
        "mcp",
        "mcp_types",
        "jsonschema",
        "rich",
        "yaml",
        "asyncio",
        "codegen.shim._runtime",
    )
    code = (
        f"import sys; HEAVY = {heavy!r}; "
        "from codegen.cli import main; code = main(['generate', *sys.argv[1:], '--check']); "
        "heavy = sorted(m for m in HEAVY if m in sys.modules); "
        "print(code, heavy)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", code, *ARGS], cwd=project, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "0 []"


def test_cache_folder_ignores_itself_and_prunes_old_entries(tmp_path: Path) -> None:
    from codegen.cache import _KEEP

    cache = Cache(tmp_path / ".toolgen-cache")
    for i in range(20):
        cache.put_split(f"k{i:02d}", [("m", ("A",), f"code {i}")])
    assert (tmp_path / ".toolgen-cache" / ".gitignore").read_text() == "*\n"
    assert len(list((tmp_path / ".toolgen-cache" / "splits").glob("*.json"))) == _KEEP["splits"] == 4
    assert cache.get_split("k19") == [("m", ("A",), "code 19")]
    cache.put_models("k19", "code 19")
    assert Cache(None).get_models("k19") is None


def test_the_key_covers_every_input_and_the_generator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from codegen import cache as cache_module
    from codegen.model import SourceTools

    source = SourceTools(name="s", kind="mcp-json", origin="s.json", tools=tuple(_base()))
    key = Cache.files_key([source], "pkg")
    assert Cache.files_key([source], "other") != key
    renamed = SourceTools(name="s", kind="mcp-json", origin="s.json", tools=tuple(_base()), wire_prefix="ns")
    assert Cache.files_key([renamed], "pkg") != key
    from codegen.infer import InferredOutput

    learned = {"s": {"read_graph": InferredOutput("model", 2, {"type": "object"})}}
    assert Cache.files_key([source], "pkg", learned) != key
    assert Cache.files_key([source], "pkg", {"s": {"read_graph": InferredOutput("text", 2)}}) not in (
        key,
        Cache.files_key([source], "pkg", learned),
    )
    monkeypatch.setattr(cache_module, "fingerprint", lambda: "an edited generator")
    assert Cache.files_key([source], "pkg") != key


def test_the_fingerprint_covers_every_runtime_module_the_generator_imports() -> None:
    """The generator builds on runtime modules (tool_checks, lockfile, the contract's rules...): an
    edit to any of them must miss the cache, so each one is among the fingerprinted files."""
    import ast
    import importlib.util

    import codegen
    from codegen.cache import runtime_files

    imported: set[str] = set()
    for path in Path(codegen.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("mas.runtime."):
                imported.add(node.module)
    assert "mas.runtime.tool_checks" in imported  # build.py's checks: what the old fingerprint missed
    fingerprinted = {path.resolve() for path in runtime_files()}
    for module in sorted(imported):
        spec = importlib.util.find_spec(module)
        assert spec is not None and spec.origin is not None
        assert Path(spec.origin).resolve() in fingerprinted, module
