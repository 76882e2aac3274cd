"""One definition per default and per rule (issue 37, part 2): runner.py's flags take their
defaults and choices from RunOptions, the request timeouts are the client's, the densities and
the estimator modes are written once. What cannot import the one definition (a lower layer,
docs/architecture.md) is tied to it here; the values themselves are checked against the
documented ones (docs/runner.md's flag table, docs/statistics.md's six modes)."""
from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import get_args

REPO = Path(__file__).resolve().parent.parent


def _runner_doc_defaults() -> dict:
    """{flag: default cell} of docs/runner.md's *Flags* table."""
    rows = {}
    for line in (REPO / "docs" / "runner.md").read_text(encoding="utf-8").splitlines():
        match = re.match(r"\| `(--[a-z-]+)[^`]*` \| ([^|]+) \|", line)
        if match:
            rows[match.group(1)] = match.group(2).strip().strip("`")
    return rows


def test_runner_defaults_are_the_documented_ones():
    from resolver.cli.runner import build_parser

    args = build_parser().parse_args(["--config", "c", "--template", "t", "--sampler", "s", "--model", "m"])
    documented = _runner_doc_defaults()
    for flag in ("--seed", "--parallel", "--threads", "--timeout", "--load-timeout"):
        assert getattr(args, flag[2:].replace("-", "_")) == float(documented[flag]), flag
    for flag in ("--density", "--cache", "--output"):
        assert getattr(args, flag[2:]) == documented[flag], flag
    assert documented["--mode"] == "api" and args.mode is None    # None: --mode not given, which means api
    assert args.tasks == [] and args.shuffle is True and args.quiet is False


def test_runner_parser_and_run_options_agree():
    """Every optional RunOptions field is the parser's default for its flag, so a run from the
    command line and one built in Python (the simulator, the tests) get the same options."""
    from resolver.cli.runner import build_parser
    from resolver.run import RunOptions

    required = {"config": "c", "template": "t", "sampler": "s", "model": "m"}
    args = build_parser().parse_args([a for k, v in required.items() for a in (f"--{k}", v)])
    from_parser = RunOptions(**{**vars(args), "mode": "api"})
    built = RunOptions(**required)
    assert from_parser.model_dump() == built.model_dump()


def test_runner_choices_are_the_models():
    from resolver.cli.runner import build_parser
    from resolver.config import DENSITIES
    from resolver.run import RUN_MODES

    choices = {a.dest: tuple(a.choices) for a in build_parser()._actions if a.choices}
    assert RUN_MODES == ("api", "write-batch", "read-batch") == choices["mode"]
    assert DENSITIES == ("normal", "lowdef", "corner") == choices["density"]


def test_the_densities_of_other_layers_are_the_configs():
    """records (a lower layer than config) spells the densities out in metadata.json's model;
    the dataset file and r12sim read config's."""
    from resolver.catalog.datasets import DatasetFile
    from resolver.cli.r12sim import parse_args
    from resolver.config import DENSITIES
    from resolver.records import RunMetadata

    assert get_args(RunMetadata.model_fields["density"].annotation) == DENSITIES
    assert get_args(DatasetFile.model_fields["density"].annotation) == DENSITIES
    for density in DENSITIES:
        assert parse_args(["--density", density]).density == density


def test_the_client_and_the_runner_share_the_timeouts():
    """ChatClient's defaults are what runner.py sends (no None standing for 'the client's')."""
    from resolver.client import DEFAULT_LOAD_TIMEOUT, DEFAULT_TIMEOUT, ChatClient
    from resolver.run import RunOptions

    signature = inspect.signature(ChatClient.__init__).parameters
    fields = RunOptions.model_fields
    assert (DEFAULT_TIMEOUT, DEFAULT_LOAD_TIMEOUT) == (3600.0, 600.0)
    assert signature["timeout"].default == fields["timeout"].default == DEFAULT_TIMEOUT
    assert signature["load_timeout"].default == fields["load_timeout"].default == DEFAULT_LOAD_TIMEOUT


def test_estimator_modes_are_defined_once():
    from resolver import analysis, stats
    from resolver.cli.analyze import build_parser

    assert stats.MODES == ("E_I", "E_P", "E_O", "C_I", "C_P", "C_O") and stats.DEFAULT_MODE == "C_P"
    assert not hasattr(analysis.common, "MODES") and not hasattr(analysis.common, "DEFAULT_MODE")
    scores = build_parser()._subparsers._group_actions[0].choices["compare"]
    [mode] = [a for a in scores._actions if a.dest == "mode"]
    assert tuple(mode.choices) == stats.MODES and mode.default == stats.DEFAULT_MODE


def test_the_seed_default_is_written_once():
    """runner.py's --seed default is resolver.config.DEFAULT_SEED, and every tool that replays a run's
    problems (simulator, agreement, shortcuts audit, config expansion) defaults to that name, not to
    a number of its own."""
    from resolver.config import DEFAULT_SEED
    from resolver.run import RunOptions

    assert DEFAULT_SEED == float(_runner_doc_defaults()["--seed"])
    assert RunOptions.model_fields["seed"].default == DEFAULT_SEED
    literal = re.compile(r"seed\w*\s*:\s*int\s*=\s*42\b|--seed\"[^)]*default=42\b")
    written = [f"{path.relative_to(REPO)}:{n}" for path in sorted((REPO / "resolver").rglob("*.py"))
               for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if literal.search(line)]
    assert written == []
