"""Developer tasks. Every session installs the project the way a user does (``pip install .``)."""

from __future__ import annotations

import os
from pathlib import Path

import nox

#: fuzz-report.json goes beside this file (git-ignored), wherever nox was started from.
FUZZ_REPORT = Path(__file__).resolve().parent / "fuzz-report.json"
#: Every listing that made `generate` exit 2 in `nox -s fuzz` is saved here (git-ignored).
FUZZ_REFUSED = Path(__file__).resolve().parent / "fuzz-refused"

# uv when it is there (the README installs ``nox[uv]``): it makes the test session's environment in
# 9 s from an empty uv cache where pip took 28 s (docs/tests.md); plain venv and pip otherwise.
nox.options.default_venv_backend = "uv|venv"
nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True

PYPROJECT = nox.project.load_toml("pyproject.toml")


#: The optional extras the test session installs, so CI runs the framework adapters' tests
#: (docs/frameworks.md); they add about 15 s to a first install from a warm pip cache.
TEST_EXTRAS = ".[pydantic-ai,openai-agents,langchain]"


def _install(session: nox.Session, *groups: str, target: str = ".") -> None:
    # pip in the environment too, a current one (tests install into it with ``python -m pip``). With
    # pip as the installer, the one a new venv brings (23.2 with Python 3.11) spent 38 s resolving
    # the test group on the 2-core machine, pip 26 spends 20 s (docs/tests.md).
    session.install("pip>=25")
    # A real (non-editable) install: templates and schemas must travel inside the wheel. No bytecode
    # is compiled here (uv's default): the first process to import a module writes it (the pytest run sets
    # PYTHONDONTWRITEBYTECODE empty), so only what something imports is compiled. Compiling every
    # installed module up front cost 15 s of the 18 s install and 11 CPU-s more up to the first test
    # (the frameworks' packages are large and mostly never imported; docs/tests.md, stop 39).
    session.install(target, *nox.project.dependency_groups(PYPROJECT, *groups))


@nox.session
def tests(session: nox.Session) -> None:
    """The fast tier of the test suite against the installed wheel (pass pytest options after --).

    The README's test command and CI's. Every area keeps tests with its real parts here; the
    exhaustive and expensive variants are marked ``full`` and left out (docs/tests.md, "Two tiers").
    """
    _install(session, "test", target=TEST_EXTRAS)
    _pytest(session)


@nox.session
def tests_full(session: nox.Session) -> None:
    """Both tiers: the fast one and every test marked ``full`` (pass pytest options after --)."""
    _install(session, "test-full", target=TEST_EXTRAS)
    _pytest(session, "--full")


def _pytest(session: nox.Session, *tier: str) -> None:
    # importlib mode: tests import the installed package, not the source tree beside them.
    # -n: one pytest-xdist worker per core, plus two. Many tests wait on a clock rather than a core
    # (the reference server's four one-second research stages, timeouts that prove a timeout), and
    # the extra workers compute meanwhile: on 2 cores pytest took 149-166 s with 4 workers against
    # 172-179 s with 3 (two interleaved pairs, stop 39; 3 beat 2 at stop 26), now that a worker's
    # collection costs 3 CPU-s rather than 8 (docs/tests.md). Every
    # test works in its own tmp_path and binds free 127.0.0.1 ports, so workers never share a file
    # or a port. loadfile keeps a module on one worker, so its module-scoped fixtures (generated
    # packages, mypy and pyright runs) run once; the files with tests marked slow start first
    # (tests/conftest.py). --durations: the slowest tests, so a test that grows slow shows up in
    # every run. Options after -- win.
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    workers = str(cores + 2)
    # Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE, as on
    # this project's machines): else each worker rewrites the asserts of every test module again and
    # each test's Python process compiles the helpers it imports, 6 CPU-s a worker for collection
    # alone. The caches go to __pycache__ folders git ignores.
    env = {"PYTHONDONTWRITEBYTECODE": ""}
    session.run("pytest", "--import-mode=importlib", "-n", workers, "--dist", "loadfile", "--durations=15",
                *tier, *session.posargs, env=env)  # fmt: skip


@nox.session
def lint(session: nox.Session) -> None:
    """Ruff and mypy --strict over the runtime, the generator and the benchmark (extra args go to ruff)."""
    _install(session, "lint", target=TEST_EXTRAS)  # mypy checks the framework adapters against them
    session.run("ruff", "check", "mas", "codegen", "tests", *session.posargs)
    session.run("ruff", "format", "--check", "mas", "codegen", "tests")
    session.run("mypy", "mas", "codegen", "benchmarks/bench.py")  # bench.py reaches the tests' helpers (mypy_path)


@nox.session
def generate(session: nox.Session) -> None:
    """Regenerate generated/ from library-samples/ and the sample MCP server (args go to the CLI).

    Settings come from [tool.toolgen] in pyproject.toml; try `nox -s generate -- --check`.
    """
    _install(session)
    session.run("python", "-m", "codegen", "generate", *session.posargs)


@nox.session
def mutate(session: nox.Session) -> None:
    """Mutation testing (mutmut) over the modules that carry the docs' promises; prints the score.

    Not part of `tests`: it takes minutes. Targets and tests: [tool.mutmut] in pyproject.toml and
    tests/mutation/run_mutmut.py; survivors are explained in docs/mutation.md. `-- --score` only
    prints the score of the last run.
    """
    _install(session, "test", "mutate")
    session.run("python", "tests/mutation/run_mutmut.py", *session.posargs)


@nox.session
def fuzz(session: nox.Session) -> None:
    """Fuzz `generate` with thousands of random tool lists (tests/codegen/test_fuzz.py), and the
    runtime's boundary (tests/runtime/test_boundary_fuzz.py) with as many random inputs.

    TOOLGEN_FUZZ_EXAMPLES sets the count (default 3000 here; the fast tier runs 10 through
    `generate` and 20 per runtime property, the full tier 40 and 80). The figures (examples, exit codes, how often each
    degradation kind fired) go to fuzz-report.json, and every listing that made `generate` exit 2
    to fuzz-refused/ (one JSON file each, with the error line).
    """
    _install(session, "test")
    env = {
        "TOOLGEN_FUZZ_EXAMPLES": os.environ.get("TOOLGEN_FUZZ_EXAMPLES", "3000"),
        "TOOLGEN_FUZZ_TYPECHECKED": os.environ.get("TOOLGEN_FUZZ_TYPECHECKED", "40"),
        "TOOLGEN_FUZZ_REPORT": str(FUZZ_REPORT),
        "TOOLGEN_FUZZ_SAVE_REFUSED": str(FUZZ_REFUSED),
    }
    # The runtime's boundary properties (stdio lines, depth, secrets, pins, routing names, floods of
    # server-to-client requests) run with the same count.
    session.run("pytest", "--import-mode=importlib", "-p", "no:cacheprovider", "tests/codegen/test_fuzz.py",
                "tests/runtime/test_boundary_fuzz.py", *session.posargs, env=env)  # fmt: skip
    session.log(FUZZ_REPORT.read_text(encoding="utf-8"))


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks against their floors; writes benchmarks/results.md (try `nox -s bench -- --quick`)."""
    _install(session, "test-full")  # pyright, mypy and jedi are timed too; tiktoken counts tokens
    session.run("python", "benchmarks/bench.py", *session.posargs)
