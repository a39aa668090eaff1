"""Mistakes with the test kit of the package generated from every capture; the test snapshots each."""

from __future__ import annotations

from captures.inputs import TimeConvertTimeInput
from captures.outputs import TimeGetCurrentTimeOutput
from captures.testing import FakeTools


def convert(args: TimeConvertTimeInput) -> TimeGetCurrentTimeOutput:
    raise NotImplementedError(args["time"])


def mistakes() -> None:
    fake = FakeTools()
    fake.time.get_current_time.returns("12:00")  # a value of another type than the method returns
    fake.time.get_current_time.answers(convert)  # a function taking another tool's arguments
    fake.time.get_current_tme.returns("12:00")  # a tool that is not in the package
