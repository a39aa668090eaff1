"""One word per concept (issue 34): the code spells each concept one way, and docs/generator.md's
"Words used here" lists every word with the older spellings users still rely on.

Two words had a second meaning: "snapshot" (the lock) and "namespace" (also the registry's prefix
of a server's tool names). Each older spelling is kept only where users rely on it, and listed here
with why."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Where the code and the templates live (the generated package's shim and templates included).
SCANNED = ("codegen", "mas", "templates")
WORDS_SECTION = "## Words used here"

#: The lock's older name, "snapshot", and the only places it may still be spelled, each with why.
#: Anything else that says "snapshot" (a name, a message, a comment) is a leftover of the old word.
SNAPSHOT_KEPT: dict[str, tuple[str, ...]] = {
    # the --snapshot flag, an alias of --lock: scripts and CI jobs still pass it
    "codegen/cli.py": (r"--snapshot",),
    "codegen/diff_cli.py": (r"--snapshot",),
    # the `snapshot` key of [tool.toolgen], an alias of `lock`: projects' pyproject.toml spell it
    "codegen/settings.py": (r"'snapshot'", r'"snapshot"', r"``snapshot``"),
    # the lock's format key: every lock file already committed carries it
    "mas/runtime/lockfile.py": (r"toolgen_snapshot", r'"snapshot"'),
    # monty's own class names for a paused run in code mode: another concept, not ours to rename
    "mas/runtime/code_mode/core.py": (r"\bmonty\.(?:Function|Future)Snapshot\b",),
}
#: The spellings users rely on, each of which the lock's entry in "Words used here" must name.
SNAPSHOT_SPELLINGS_FOR_USERS = ("`--snapshot`", "`snapshot` key", "`toolgen_snapshot`")

#: "namespace" is a generated package's attribute of one source (``tools.<namespace>.<method>``):
#: the generator, the templates and code mode (which runs the package) speak of it. The registry's
#: prefix of a server's tool names (infra ``prefix``) was called namespace too; these are the only
#: places outside the package side that still spell it, as the older name of ``prefix``.
PACKAGE_SIDE = ("codegen/", "templates/", "mas/runtime/code_mode/")
NAMESPACE_KEPT: dict[str, tuple[str, ...]] = {
    # the infra key `namespace`, read as `prefix`: infra files spell it
    "mas/runtime/infra.py": (r"``namespace``", r'"namespace"', r"'namespace'"),
    "mas/runtime/infra.schema.yaml": (r"^\s*namespace:$",),
    # MCPServerConfig.namespace, read-only: code that reads it keeps working
    "mas/runtime/config.py": (r"def namespace\(", r'"namespace"'),
    # RuntimeRegistry(namespaces=...): callers that pass it keep working
    "mas/runtime/registry.py": (r"`+namespaces`+", r'"namespace"', r"namespaces: Mapping", r"or namespaces or"),
}
#: Other projects' words: Python's and pydantic's namespaces are theirs.
NAMESPACE_THEIRS = (r"argparse\.Namespace", r"SimpleNamespace", r"protected namespaces")
#: How the registry's prefix was spelled as a namespace; never on the package side.
NAMESPACE_AS_PREFIX = re.compile(r"namespace prefix|names and namespaces|infra `*namespace", re.IGNORECASE)
#: The spellings users rely on, each of which the prefix's entry in "Words used here" must name.
NAMESPACE_SPELLINGS_FOR_USERS = ("`namespace` key", "`MCPServerConfig.namespace`", "`RuntimeRegistry(namespaces=...)`")

#: The words "Words used here" defines; a word given a meaning in the code is added here and there.
WORDS = ("source", "namespace", "prefix", "listing", "lock", "samples", "model", "envelope", "call options", "drift")


def _lines() -> Iterator[tuple[str, int, str]]:
    for root in SCANNED:
        for path in sorted((REPO / root).rglob("*")):
            if path.is_file() and path.suffix in (".py", ".jinja", ".yaml") and "__pycache__" not in path.parts:
                rel = path.relative_to(REPO).as_posix()
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    yield rel, number, line


def snapshot_leftovers() -> list[str]:
    """``path:line`` of every line of the code that says "snapshot" outside ``SNAPSHOT_KEPT``."""
    found = []
    for rel, number, line in _lines():
        rest = line
        for kept in SNAPSHOT_KEPT.get(rel, ()):
            rest = re.sub(kept, "", rest)
        if "snapshot" in rest.lower():
            found.append(f"{rel}:{number}: {line.strip()}")
    return found


def test_the_lock_is_called_lock_in_the_code() -> None:
    assert snapshot_leftovers() == []


def namespace_leftovers() -> list[str]:
    """``path:line`` of every line that says "namespace" for the registry's prefix: outside the
    package side anywhere but ``NAMESPACE_KEPT``, and on it in the old phrases."""
    found = []
    for rel, number, line in _lines():
        rest = line
        for kept in (*NAMESPACE_KEPT.get(rel, ()), *NAMESPACE_THEIRS):
            rest = re.sub(kept, "", rest)
        if "namespace" not in rest.lower():
            continue
        if not rel.startswith(PACKAGE_SIDE) or NAMESPACE_AS_PREFIX.search(rest):
            found.append(f"{rel}:{number}: {line.strip()}")
    return found


def test_namespace_means_the_packages_attribute_only() -> None:
    assert namespace_leftovers() == []


def test_each_kept_spelling_is_still_there() -> None:
    """An alias removed from the code must leave ``SNAPSHOT_KEPT``/``NAMESPACE_KEPT`` (and the docs) too."""
    for rel, kept in (*SNAPSHOT_KEPT.items(), *NAMESPACE_KEPT.items()):
        text = (REPO / rel).read_text(encoding="utf-8")
        assert all(re.search(spelling, text, re.MULTILINE) for spelling in kept), rel


def _words_section() -> str:
    text = (REPO / "docs" / "generator.md").read_text(encoding="utf-8")
    begin = text.index(WORDS_SECTION)
    end = text.find("\n## ", begin + 1)
    return text[begin : end if end != -1 else None]


def _entries() -> dict[str, str]:
    """Each ``- **word**: ...`` entry of "Words used here", by word."""
    entries = re.split(r"^- \*\*", _words_section(), flags=re.MULTILINE)[1:]
    return {entry.split("**", 1)[0]: entry for entry in entries}


def test_words_used_here_defines_each_word() -> None:
    assert sorted(set(WORDS) - set(_entries())) == []


def test_the_lock_entry_names_every_spelling_users_keep() -> None:
    lock = _entries()["lock"]
    assert [s for s in SNAPSHOT_SPELLINGS_FOR_USERS if s not in lock] == []


def test_the_prefix_entry_names_every_spelling_users_keep() -> None:
    prefix = _entries()["prefix"]
    assert [s for s in NAMESPACE_SPELLINGS_FOR_USERS if s not in prefix] == []
