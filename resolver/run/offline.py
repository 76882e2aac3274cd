"""`runner.py --offline ROUNDS`: write the test set of a run without asking a model.

Each step gets ROUNDS x the precision level's `count` samples (the number a run
would use if every step went the full number of rounds), rendered with the
template, as docs/runner.md records whose answer fields are null / false. The run folder
has the same name and layout as an API run's, so the prompts can be inspected,
diffed between runs, or fed to other tools.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from resolver.records import RecordWriter, new_run_folder, step_file
from resolver.run.experiment import Experiment, RunOptions, blank_record, build_experiment, messages_for
from resolver.run.folder_metadata import recorded_run, run_metadata
from resolver.run.report import Reporter


@dataclass(frozen=True)
class OfflineRun:
    """What `runner.py --offline` wrote."""

    folder: Path
    samples: int
    steps: int
    rounds: int
    count: int                 # samples per round (the precision level's count)
    precision: str
    seconds: float


def write_offline(experiment: Experiment, folder: Path, rounds: int, *, quiet: bool = False, reporter: Reporter | None = None) -> int:
    """Write every step's records into `folder`; returns the number of records."""
    count = experiment.precision.count * rounds
    total = 0
    with (reporter or Reporter()).bar(total=count * len(experiment.steps), unit="sample", desc="generating",
                                      disable=quiet) as bar:
        for step in experiment.steps:  # offline has no GPU load to spread: config order
            with RecordWriter(step_file(folder, step)) as writer:
                for index, case in experiment.cases(step, 0, count):
                    messages = messages_for(experiment, step, case)
                    writer.write(blank_record(experiment, step, index, case, messages, count))
                total += writer.written
            experiment.forget(step)  # offline never returns to a step: keep memory flat
            bar.update(count)
    return total


def run_offline(opts: RunOptions, reporter: Reporter | None = None) -> OfflineRun:
    """Build the experiment and write its run folder."""
    rounds = opts.offline
    assert rounds is not None, "runner.py comes here only with --offline ROUNDS"
    started = time.perf_counter()
    reporter = reporter or Reporter()
    experiment = build_experiment(opts, reporter.bar)
    folder = new_run_folder(opts.output, experiment.config.name, experiment.model,
                            experiment.template.name, experiment.sampler.name)
    with recorded_run(folder, run_metadata(opts, experiment, "offline")):
        total = write_offline(experiment, folder, rounds, quiet=opts.quiet, reporter=reporter)
    return OfflineRun(folder, total, len(experiment.steps), rounds, experiment.precision.count,
                      experiment.precision_name, time.perf_counter() - started)
