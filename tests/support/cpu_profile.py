"""Where the suite's CPU goes: a pytest plugin that records each test's CPU seconds.

    bash tests/run.sh -p tests.support.cpu_profile --cpu-profile ../cpu.json

For every test (setup, call and teardown together) it records the user and system CPU seconds
of the test process itself and of the child processes that ended meanwhile (a script run,
a server stopped by a fixture's teardown; a server is counted when it is reaped, so a module's
server lands on the test after which it stops), and the wall seconds. Under pytest-xdist each
worker sends its rows to the controller, which writes them all to the JSON file with the
totals of pytest's processes (controller and workers, with every child they reaped), and
prints the files that cost most. Comparing those totals with `/usr/bin/time` of the whole
`tests/run.sh` gives the part of a run that was the background installs (docs/performance.md,
"Where the suite's CPU goes").
"""
from __future__ import annotations

import json
import resource
import time
from collections import defaultdict
from pathlib import Path

import pytest

KEY = "cpu_profile"
FIELDS = ("user", "system", "children_user", "children_system")
SHOWN_FILES = 15


def _usage() -> tuple[float, float, float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime, own.ru_stime, children.ru_utime, children.ru_stime


def _spent(totals: dict, kind: str, children: bool = True) -> float:
    """A process's `kind` ("user" or "system") CPU seconds, with its reaped children's or without."""
    return totals[kind] + (totals[f"children_{kind}"] if children else 0.0)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cpu-profile", metavar="FILE", help="write each test's CPU seconds to FILE (JSON) and "
                     "print the costliest test files (tests/support/cpu_profile.py)")


class CpuProfile:
    def __init__(self, config: pytest.Config, target: Path | None):
        self.config = config
        self.target = target
        self.rows: list[dict] = []
        self.processes: list[dict] = []   # one entry per process of pytest's: its CPU totals
        self.worker = getattr(config, "workerinput", {}).get("workerid", "main")
        self.summary: dict | None = None      # the controller's, once the session ends

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item):
        before, started = _usage(), time.monotonic()
        yield
        after = _usage()
        row = {"nodeid": item.nodeid, "worker": self.worker, "wall": round(time.monotonic() - started, 3)}
        row.update({name: round(b - a, 3) for name, a, b in zip(FIELDS, before, after)})
        self.rows.append(row)

    def _totals(self) -> dict:
        return {"worker": self.worker, **{name: round(v, 3) for name, v in zip(FIELDS, _usage())}}

    @pytest.hookimpl(optionalhook=True)       # pytest-xdist's hook: a run without it still loads this plugin
    def pytest_testnodedown(self, node, error) -> None:
        """Controller: a worker's rows and totals, sent in its workeroutput."""
        sent = getattr(node, "workeroutput", {}).get(KEY)
        if sent:
            self.rows += sent["rows"]
            self.processes.append(sent["totals"])

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(self.config, "workerinput"):
            self.config.workeroutput[KEY] = {"rows": self.rows, "totals": self._totals()}   # type: ignore[attr-defined]
            return
        controller, workers = self._totals(), self.processes
        # Under xdist the workers are the controller's children: they are counted once, from their
        # own totals, whether or not they were reaped yet. In one process its children are the tests'.
        total = {kind: _spent(controller, kind, children=not workers) + sum(_spent(w, kind) for w in workers)
                 for kind in ("user", "system")}
        self.summary = {"total": {k: round(v, 1) for k, v in total.items()}, "processes": [controller, *workers],
                        "tests": sorted(self.rows, key=lambda r: r["nodeid"])}
        if self.target is not None:
            self.target.write_text(json.dumps(self.summary, indent=1) + "\n", encoding="utf-8")

    def pytest_terminal_summary(self, terminalreporter) -> None:
        summary = self.summary
        if summary is None:
            return
        per_file: dict[str, float] = defaultdict(float)
        for row in summary["tests"]:
            per_file[row["nodeid"].split("::")[0]] += sum(row[name] for name in FIELDS)
        total = summary["total"]
        terminalreporter.write_sep("-", f"CPU of pytest's processes: {total['user']:.0f} s user + "
                                        f"{total['system']:.0f} s system")
        for path, seconds in sorted(per_file.items(), key=lambda kv: -kv[1])[:SHOWN_FILES]:
            terminalreporter.write_line(f"{seconds:8.1f} s  {path}")
        if self.target is not None:
            terminalreporter.write_line(f"every test's figures: {self.target}")


def pytest_configure(config: pytest.Config) -> None:
    option = config.getoption("--cpu-profile")     # without it, the summary is only printed
    target = Path(option).resolve() if option else None
    config.pluginmanager.register(CpuProfile(config, target), "cpu-profile-recorder")
