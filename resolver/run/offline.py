"""`runner.py --offline ROUNDS`: write the test set of a run without asking a model.

Each step gets ROUNDS x the precision level's `count` samples (the number a run
would use if every step went the full number of rounds), rendered with the
template, as docs/runner.md records whose answer fields are null / false. The run folder
has the same name and layout as an API run's, so the prompts can be inspected,
diffed between runs, or fed to other tools.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from tqdm import tqdm

from resolver.records import RecordWriter, new_run_folder, step_file
from resolver.run.experiment import RunOptions, blank_record, build_experiment, cases_for, forget_step, messages_for


def write_offline(experiment, folder: Path, rounds: int, *, quiet: bool = False) -> int:
    """Write every step's records into `folder`; returns the number of records."""
    count = experiment.precision.count * rounds
    total = 0
    with tqdm(total=count * len(experiment.steps), unit="sample", desc="generating",
              disable=quiet, file=sys.stderr, dynamic_ncols=True) as bar:
        for step in experiment.steps:  # offline has no GPU load to spread: config order
            with RecordWriter(step_file(folder, step)) as writer:
                for index, case in cases_for(step, 0, count):
                    messages = messages_for(experiment, step, case)
                    writer.write(blank_record(experiment, step, index, case, messages, count))
                total += writer.written
            forget_step(step)  # offline never returns to a step: keep memory flat
            bar.update(count)
    return total


def run_offline(opts: RunOptions) -> Path:
    """Build the experiment, write the run folder, print a one-line summary."""
    started = time.perf_counter()
    experiment = build_experiment(opts)
    folder = new_run_folder(opts.output, experiment.config.name, experiment.model,
                            experiment.template.name, experiment.sampler.name)
    total = write_offline(experiment, folder, opts.offline, quiet=opts.quiet)
    elapsed = time.perf_counter() - started
    print(f"offline: {total} samples in {len(experiment.steps)} steps "
          f"({opts.offline} round(s) x {experiment.precision.count}, precision "
          f"{experiment.precision_name!r}) written to {folder} in {elapsed:.1f}s")
    return folder
