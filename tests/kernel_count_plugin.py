"""pytest plugin: report how many cases were checked against the running kernel.

Tests record their count with ``record_property("kernel_checked", n)``; this
plugin adds up those properties (they travel with each test report, so the sum
is right under pytest-xdist too) and prints the total in the terminal summary.
Register it with ``-p kernel_count_plugin`` (tests/ on sys.path) or
``pytest_plugins = ["kernel_count_plugin"]`` in the top-level conftest.
"""

from __future__ import annotations

import pytest

PROPERTY = "kernel_checked"


class KernelCount:
    """Sums the ``kernel_checked`` properties of all test reports."""

    def __init__(self) -> None:
        self.total = 0

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            self.total += sum(value for name, value in report.user_properties if name == PROPERTY)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.total:
            terminalreporter.write_sep("-", "csum.kernel")
            terminalreporter.write_line(f"{self.total} cases checked against the running kernel's BPF checksum helpers")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(KernelCount(), "csum-kernel-count")
