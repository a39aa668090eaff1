"""The test kit's pytest plugin (docs/testing.md), registered by installing toolgen (``pytest11``).

- ``fake_tools``: a ``FakeTools`` of the package the test names with
  ``@pytest.mark.toolgen(package="my_tools", strict=True, seed=0)``, else the ``toolgen_package``
  ini option (``[tool.pytest.ini_options] toolgen_package = "my_tools"``). When the test ends,
  a ``FakeToolsError`` a caller swallowed (a registry turns a provider's exception into an error
  envelope) fails it.
- ``make_fake_tools``: the factory behind it, ``make_fake_tools("my_tools", strict=True)``, for a
  test that needs several fakes; each is checked the same way.

A failure of the kit reads as a failed assertion at the test's line: ``FakeToolsError`` is an
``AssertionError``, and the kit's own frames are hidden (``__tracebackhide__``). pytest loads this
module in every run of a project that has toolgen installed, so it imports nothing but pytest and
the standard library; the package's ``testing`` module is imported when a fixture is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Generator, Iterator
from typing import Any

import pytest

__all__ = ["fake_tools", "make_fake_tools", "pytest_addoption", "pytest_configure", "pytest_runtest_makereport"]

MARKER = "toolgen"
INI_PACKAGE = "toolgen_package"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(INI_PACKAGE, "the generated package whose FakeTools the fake_tools fixture builds", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(package=None, strict=False, seed=0): the generated package (and options) of the fake_tools fixture",
    )


#: Set on a test item whose call failed: its fakes' failures were reported with it, not again.
_CALL_FAILED = "_toolgen_call_failed"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call" and report.failed:
        setattr(item, _CALL_FAILED, True)
    return report


def _fake_class(package: str) -> Any:
    try:
        testing = importlib.import_module(f"{package}.testing")
    except ImportError as exc:
        raise pytest.UsageError(
            f"toolgen: cannot import {package}.testing ({exc}); generate the package with toolgen, "
            f"or name another one ({INI_PACKAGE} or @pytest.mark.{MARKER}(package=...))"
        ) from exc
    return testing.FakeTools


@pytest.fixture
def make_fake_tools(request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    """``make_fake_tools(package, strict=False, seed=0)``: a ``FakeTools`` of ``package``, checked
    for swallowed failures when the test ends (unless the test failed already)."""
    made: list[Any] = []

    def make(package: str, *, strict: bool = False, seed: int = 0) -> Any:
        fake = _fake_class(package)(strict=strict, seed=seed)
        made.append(fake)
        return fake

    yield make
    if not getattr(request.node, _CALL_FAILED, False):
        for fake in made:
            fake.check()


@pytest.fixture
def fake_tools(request: pytest.FixtureRequest, make_fake_tools: Callable[..., Any]) -> Any:
    """A ``FakeTools`` of the package named by ``@pytest.mark.toolgen(package=...)`` or the
    ``toolgen_package`` ini option."""
    marker = request.node.get_closest_marker(MARKER)
    options: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    package = options.pop("package", None) or request.config.getini(INI_PACKAGE)
    if not package:
        raise pytest.UsageError(
            f"toolgen: the fake_tools fixture needs a package: set {INI_PACKAGE} in the pytest settings "
            f"or mark the test @pytest.mark.{MARKER}(package='my_tools')"
        )
    return make_fake_tools(str(package), **options)
