"""``nox -s mutate``: mutation testing (mutmut) over the functions that carry the docs' promises.

Run from the repository root: ``python tests/mutation/run_mutmut.py`` runs mutmut over TARGETS and
prints the score; ``--score`` only prints the score of the last run (from ``mutants/``). Which
files are mutated and which tests run is configured in ``[tool.mutmut]`` of pyproject.toml; the
survivors and why they are harmless are listed in docs/mutation.md.
"""

from __future__ import annotations

import fnmatch
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

# mutmut's names: module.x_function__mutmut_N, module.xǁClassǁmethod__mutmut_N.
_CONTRACT = "mas.runtime.contracts.tool_contract."
_SHIM = "codegen.shim._runtime."
_RULES = "mas.runtime.contracts._rules."
TARGETS = {
    "naming": ["codegen.naming.*"],
    "write": ["codegen.write.*"],
    "lock": ["codegen.lock.*"],
    "literals": ["codegen.literals.*"],
    # The one envelope rule (issue 7): mas/runtime/contracts/_rules.py, copied into every package.
    "envelope rule": [_CONTRACT + "x_wrap_result__*", _CONTRACT + "xǁToolResultEnvelopeǁcoerce__*"]
    + [
        f"{_RULES}x_{name}__*"
        for name in (
            "error_kind",
            "failure_dict",
            "_is_dunder",
            "_dumped",
            "_is_block_list",
            "is_envelope",
            "_checked",
            "joined_text",
            "_from_mapping",
            "_plain",
            "to_envelope",
        )
    ],
    "argument forwarding": [
        _CONTRACT + f"x_{name}__*" for name in ("accepted_call_kwargs", "_forwardable", "invoke_call_tool")
    ]
    + [_CONTRACT + "x_ainvoke_call_tool__*"]
    + [_CONTRACT + "x__forwarded_to__*"]
    # `_rules._declared` is not listed: mutmut leaves decorated functions (it is lru_cached) alone.
    + [f"{_RULES}x_{name}__*" for name in ("forward_target", "accepted_options", "keywords_taken", "options_for")],
    "pagination": ["mas.runtime.mcp.provider.xǁMCPToolProviderǁ_fetch_listing__*"],
    "redaction": [
        f"mas.runtime.mcp._convert.x_{name}__*"
        for name in ("resolve_headers", "leaf_exception", "exception_text", "scrub", "scrub_envelope", "clip")
    ]
    + ["mas.runtime.mcp.provider.xǁMCPToolProviderǁ_failure__*"]
    # The one place that blanks secrets (issue 17, item 12).
    + [
        f"mas.runtime.redact.x_{name}__*"
        for name in ("remember", "_ordered", "_blank", "_blank_pieces", "blank", "encodings", "_spellings")
    ]
    + ["mas.runtime.redact.x_blank_json__*", "mas.runtime.redact.x__copy__*"],
    # What one message from a server may be (issue 17, items 1-5): stdio lines, depth, size, progress.
    "size limits": [
        "mas.runtime.mcp._stdio.x_json_depth__*",
        "mas.runtime.mcp._stdio.x_answer_id__*",
        "mas.runtime.mcp._stdio.x_too_big__*",
        "mas.runtime.mcp._stdio.xǁLineBufferǁfeed__*",
        "mas.runtime.mcp._stdio.xǁ_LineParserǁparse__*",
        "mas.runtime.mcp._stdio.xǁ_LineParserǁ_slow_path__*",
        "mas.runtime.mcp._stdio.xǁ_LineParserǁ_too_deep__*",
        "mas.runtime.mcp._session.xǁProgressRelayǁ__call____*",
        "mas.runtime.mcp._session.xǁProgressRelayǁ_run__*",
        "mas.runtime.mcp._session.xǁProgressRelayǁfinish__*",
    ],
    # The same limits over HTTP: a response hook on our httpx2 client (issue 17's closing gaps).
    "http limits": [
        "mas.runtime.mcp._http_limits.x_limit_responses__*",
        "mas.runtime.mcp._http_limits.xǁHttpStateǁtrip__*",
        "mas.runtime.mcp._http_limits.xǁ_Inflaterǁfeed__*",
        "mas.runtime.mcp._http_limits.xǁ_LimitedStreamǁrequest_id__*",
        "mas.runtime.mcp._http_limits.xǁ_LimitedStreamǁdeep_refusal__*",
        "mas.runtime.mcp._http_limits.xǁ_Countedǁfeed__*",
        "mas.runtime.mcp._http_limits.xǁ_WholeBodyǁfeed__*",
        "mas.runtime.mcp._http_limits.xǁ_WholeBodyǁend__*",
        "mas.runtime.mcp._http_limits.xǁ_Eventsǁfeed__*",
        "mas.runtime.mcp._http_limits.xǁ_Eventsǁend__*",
        "mas.runtime.mcp._http_limits.xǁ_Eventsǁ_checked__*",
    ],
    # The rest of the 2026-07-28 revision (issue 20, item 3): what the agent sees, cache hints, codes.
    "2026 revision": [
        "mas.runtime.tool_filters.x_is_app_only__*",
        "mas.runtime.tool_filters.x_header_of__*",
        "mas.runtime.tool_filters.x_agent_facing__*",
        "mas.runtime.mcp._error_kinds.x_kind_of_error_code__*",
        "mas.runtime.mcp._error_kinds.x_url_elicitations__*",
        "mas.runtime.mcp._lenient_listing.xǁCacheHintǁmerged__*",
        "mas.runtime.mcp.provider.xǁMCPToolProviderǁ_cached_listing__*",
        "mas.runtime.mcp.provider.xǁMCPToolProviderǁ_store_listing__*",
    ],
    # pin: refuse on every listing (issue 17, item 13).
    "pinning": [
        "mas.runtime.pinning.xǁServerPinǁcheck__*",
        "mas.runtime.pinning.xǁServerPinǁrefusal__*",
        "mas.runtime.pinning.xǁServerPinǁunverified__*",
        "mas.runtime.pinning.xǁPinGuardǁattach__*",
        "mas.runtime.mcp.provider.xǁMCPToolProviderǁ_check_pin__*",
    ],
    # Issue 17's toolchain items; codegen/write.py (the journal) is under "write" above.
    "toolchain boundary": [
        "mas.runtime.yaml_source.xǁLineLoaderǁcompose_node__*",
        "mas.runtime.mcp._wire.x_non_json_number__*",
        "mas.runtime.mcp._wire.x__escaped__*",
        "codegen.infer.x__deeper_than__*",
        "codegen.settings.x__check_package__*",
        "codegen.settings.x__check_inputs_outside__*",
        "codegen.cache.x__keyed__*",
        "codegen.cache.x__trusted__*",
        "codegen.cache.x__read_key__*",
        "codegen.datamodels.x__field_aliases__*",
        "codegen.datamodels.x__property_keys__*",
    ],
    "shim decoding": [
        f"{_SHIM}{module}.x_{name}__*"
        for module, names in (
            ("_text", ("block_tag", "as_list", "json_or_none", "json_from_text")),
            ("_decode", ("normalize_envelope", "_is_str_root", "decode_result", "decode_envelope")),
            ("_content", ("tool_output",)),
            ("_input", ("input_round",)),
            ("_errors", ("raise_failure",)),
        )
        for name in names
    ],
}
# mutmut's exit codes: 1 and 3 are a test failure; 36, 24, 152, 255, -24 a timeout; 37 the type checker.
KILLED = {1, 3, 36, 24, 152, 255, -24, 37}


def _results(root: Path) -> dict[str, int | None]:
    results: dict[str, int | None] = {}
    for meta in sorted((root / "mutants").rglob("*.meta")):
        results.update(json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"])
    return results


def unmatched(results: dict[str, int | None]) -> list[str]:
    """TARGETS patterns that match no mutant: a function renamed, moved or no longer mutated."""
    return [p for group in TARGETS.values() for p in group if not any(fnmatch.fnmatchcase(n, p) for n in results)]


def score(root: Path) -> float:
    results = _results(root)
    total: Counter[str] = Counter()
    killed: Counter[str] = Counter()
    survivors: list[str] = []
    for area, patterns in TARGETS.items():
        for name, code in results.items():
            if any(fnmatch.fnmatchcase(name, p) for p in patterns):
                total[area] += 1
                if code in KILLED:
                    killed[area] += 1
                else:
                    survivors.append(f"{name} (exit {code})")
    for area in TARGETS:
        print(f"{area:20} {killed[area]:4} / {total[area]:4} killed")
    all_killed, all_total = sum(killed.values()), sum(total.values())
    print("survivors:", *sorted(survivors), sep="\n  ")
    percent = 100 * all_killed / all_total if all_total else 0.0
    print(f"mutation score: {all_killed} / {all_total} killed = {percent:.1f}%")
    return percent


def main(argv: list[str]) -> int:
    root = Path.cwd()
    if "--score" not in argv:
        # Naming the targets makes mutmut test only their mutants (and always afresh); it still
        # generates mutants for every function of the files in only_mutate, so its progress line
        # counts those too, but they are never run.
        patterns = [p for group in TARGETS.values() for p in group]
        subprocess.run(["mutmut", "run", "--max-children", "2", *patterns], check=True)
    score(root)
    stale = unmatched(_results(root))
    for pattern in stale:
        print(f"TARGETS pattern matches no mutant (renamed or moved?): {pattern}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
