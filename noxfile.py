"""Developer tasks. Every session installs the project the way a user does (``pip install .``)."""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True

PYPROJECT = nox.project.load_toml("pyproject.toml")


def _install(session: nox.Session, *groups: str) -> None:
    # A real (non-editable) install: templates and schemas must travel inside the wheel.
    session.install(".", *nox.project.dependency_groups(PYPROJECT, *groups))


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite against the installed wheel (pass pytest options after --)."""
    _install(session, "test")
    # importlib mode: tests import the installed package, not the source tree beside them.
    session.run("pytest", "--import-mode=importlib", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """Ruff and mypy --strict over the runtime and the generator (extra args go to ruff)."""
    _install(session, "lint")
    session.run("ruff", "check", "mas", "codegen", "tests", *session.posargs)
    session.run("ruff", "format", "--check", "mas", "codegen", "tests")
    session.run("mypy", "mas", "codegen")


@nox.session
def generate(session: nox.Session) -> None:
    """Regenerate generated/ from library-samples/ and the sample MCP server (args go to the CLI).

    Settings come from [tool.toolgen] in pyproject.toml; try `nox -s generate -- --check`.
    """
    _install(session)
    session.run("python", "-m", "codegen", "generate", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks against their floors; writes benchmarks/results.md (try `nox -s bench -- --quick`)."""
    _install(session, "test")  # pyright and mypy are timed too
    session.run("python", "benchmarks/bench.py", *session.posargs)
