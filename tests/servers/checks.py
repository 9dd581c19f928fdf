"""Soft checks for the multi-process and server suites (tests/arbiter, tests/fleet),
which run under pytest: a scenario starts real processes and servers once and then checks many
things about what they did, so that one run shows every broken promise, not only the first.

A test takes the `checks` fixture and calls `checks(cond, what, detail)` for each promise. Each
call prints `ok   what` or `FAIL what` and the detail (pytest shows a failed test's output);
the test fails at its end, after every check ran, naming each failed check. An exception still
fails the test at once. The run's summary counts the checks too (`checks: N passed, M failed`),
so that a suite's size is comparable with the runners these replaced.

Each suite's conftest.py imports this module's fixture and hooks:

    from checks import checks, pytest_runtest_call, pytest_terminal_summary  # noqa: F401
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

_totals = {"passed": 0, "failed": 0}
_summary: list[str] = []


def add_summary(line: str) -> None:
    """A line for the end of the run, after the counts (a fixture's teardown output is
    captured, and shown only when it fails)."""
    _summary.append(line)


class Checks:
    def __init__(self) -> None:
        self.passed: list[str] = []
        self.failed: list[tuple[str, str]] = []

    def __call__(self, cond: object, what: str, detail: str = "") -> bool:
        if cond:
            self.ok(what)
        else:
            self.fail(what, detail)
        return bool(cond)

    def ok(self, what: str) -> None:
        self.passed.append(what)
        _totals["passed"] += 1
        print(f"ok   {what}", flush=True)

    def fail(self, what: str, detail: str = "") -> None:
        self.failed.append((what, detail))
        _totals["failed"] += 1
        print(f"FAIL {what}", flush=True)
        for line in str(detail).rstrip("\n").splitlines()[-40:]:
            print(f"     {line}", flush=True)

    def report(self) -> str:
        lines = [f"{len(self.failed)} of {len(self.passed) + len(self.failed)} checks failed:"]
        for what, detail in self.failed:
            lines.append(f"FAIL {what}")
            lines += [f"     {line}" for line in str(detail).rstrip("\n").splitlines()[-40:]]
        return "\n".join(lines)


@pytest.fixture
def checks() -> Iterator[Checks]:
    yield Checks()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    # After the test's body: its failed soft checks fail it (an exception it raised wins).
    result = yield
    c = getattr(item, "funcargs", {}).get("checks")
    if isinstance(c, Checks) and c.failed:
        pytest.fail(c.report(), pytrace=False)
    return result


def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001 (pytest's own type)
    if _totals["passed"] or _totals["failed"]:
        terminalreporter.write_line(f"checks: {_totals['passed']} passed, {_totals['failed']} failed")
    for line in _summary:
        terminalreporter.write_line(line)
