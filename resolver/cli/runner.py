"""runner.py's command: flags, output and exit codes (its usage is the root runner.py's docstring; docs/runner.md)."""
from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, Sequence, get_args

from resolver.cli.base import ArgParser, positive_int, refuse_file_parents
from resolver.run import RUN_MODES, Reporter, RunOptions

if TYPE_CHECKING:
    from pathlib import Path

    from resolver.core.progress import Bar


def seconds(text: str) -> float:
    """A finite, positive number of seconds (at most a week)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 7 * 86400:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0 and at most 604800, got {text!r}")
    return value


def model_name(text: str) -> str:
    """A model name: non-empty, no leading/trailing spaces, no control characters."""
    if not text or text != text.strip() or any(ord(c) < 32 or c == "\x7f" for c in text) or len(text) > 512:
        raise argparse.ArgumentTypeError(f"expected a model name such as Qwen3-8B (non-empty, no surrounding "
                                         f"spaces or control characters, at most 512 characters), got {text[:60]!r}")
    return text


def option_defaults() -> dict:
    """{flag's dest: default} of every optional runner flag, read from RunOptions: the one
    definition of each default (docs/decisions.md, *One definition per default*)."""
    return {name: field.get_default(call_default_factory=True)
            for name, field in RunOptions.model_fields.items() if not field.is_required()}


def build_parser() -> ArgParser:
    d = option_defaults()
    modes, densities = RUN_MODES, get_args(RunOptions.model_fields["density"].annotation)
    p = ArgParser(prog="runner.py", description="Unified experiment runner (ReasonScape).")
    p.add_argument("--config", required=True, help="YAML experiment configuration file")
    p.add_argument("--template", required=True, help="prompt template file (templates/*.json)")
    p.add_argument("--sampler", required=True, help="sampler parameters file (samplers/*.json)")
    p.add_argument("--model", required=True, type=model_name, help="model name sent to the server and recorded")
    # --mode's own default is None so that RunOptions can tell a given --mode (mode_given)
    p.add_argument("--mode", choices=modes, default=None,
                   help=f"{modes[0]} (default), {', '.join(modes[1:-1])} or {modes[-1]}")
    p.add_argument("--apibase", default=d["apibase"], help="API base URL, e.g. http://localhost:3333 (api mode only; /v1 added if missing), "
                        "or an Azure OpenAI deployment URL with ?api-version=...")
    p.add_argument("--apikey", default=d["apikey"],
                   help="API key (default: $OPENAI_API_KEY; for an Azure deployment URL $AZURE_OPENAI_API_KEY first)")
    p.add_argument("--ca-bundle", default=d["ca_bundle"], metavar="FILE",
                   help="PEM file of extra CA certificates to trust for an https --apibase (default: "
                        "$REQUESTS_CA_BUNDLE, then $CURL_CA_BUNDLE; the system store always counts)")
    p.add_argument("--batch", default=d["batch"], help="vLLM run-batch output file to import (read-batch mode)")
    p.add_argument("--precision", default=d["precision"], help="precision level from the config (default: the first defined)")
    p.add_argument("--seed", type=int, default=d["seed"],
                   help=f"random seed added to every step's seed (default {d['seed']})")
    p.add_argument("--density", default=d["density"], choices=densities,
                   help="grid sampling density: " + ", ".join(
                       f"{name} (default)" if name == d["density"] else name for name in densities))
    p.add_argument("--degree", type=int, default=d["degree"],
                   help="degree value to apply to grid entries that do not already have a degree "
                        "(entries with one keep theirs; default: none)")
    p.add_argument("--parallel", type=positive_int, default=d["parallel"],
                   help=f"parallel completions per step (api mode, default {d['parallel']}); "
                        "--parallel x --threads requests are in flight in total")
    p.add_argument("--threads", type=positive_int, default=d["threads"],
                   help=f"parallel steps (default {d['threads']}; more steps open when a round is smaller than --parallel, "
                        "keeping --parallel x --threads requests in flight)")
    p.add_argument("--timeout", type=seconds, default=d["timeout"],
                   help=f"request timeout in seconds (default {d['timeout']:g})")
    p.add_argument("--load-timeout", type=seconds, default=d["load_timeout"], metavar="SECONDS",
                   help=f"how long a server may answer 503 'Loading model' before the run gives up "
                        f"(default {d['load_timeout']:g})")
    p.add_argument("--cache", default=d["cache"], help=f"response cache: a file or a directory (default {d['cache']})")
    p.add_argument("--task", action="append", default=d["tasks"], dest="tasks", metavar="TASK",
                   help="run only this config task (repeatable)")
    p.add_argument("--output", default=d["output"], help=f"output base directory (default {d['output']})")
    order = p.add_mutually_exclusive_group()
    order.add_argument("--shuffle", dest="shuffle", action="store_true", default=d["shuffle"],
                       help="shuffle step order (the default; accepted for old command lines)")
    order.add_argument("--no-shuffle", dest="shuffle", action="store_false", help="run steps in config order")
    p.add_argument("--quiet", action="store_true", default=d["quiet"], help="no per-step output or progress bars (errors still shown)")
    p.add_argument("--tokenizer", default=d["tokenizer"], help="HuggingFace tokenizer id or local directory (needed for calibrate tasks)")
    p.add_argument("--rounds", type=positive_int, default=d["rounds"], metavar="N",
                   help="write-batch only: at most N rounds per unfinished step in the file (default: every "
                        "round up to the precision level's maxrounds, one cycle; 1 = a round per cycle)")
    p.add_argument("--against", default=d["against"], metavar="FOLDER",
                   help="A's run folder: draw A's problems, pair every sample with A's and stop each cell "
                        "(tier x task) once B - A is decided or equivalent (api mode; docs/runner.md)")
    p.add_argument("--margin", type=float, default=d["margin"], metavar="DELTA",
                   help=f"with --against: a cell whose anytime 95%% interval lies inside ±DELTA is equivalent "
                        f"and stops (default {d['margin']:g})")
    p.add_argument("--offline", type=positive_int, default=d["offline"], metavar="ROUNDS",
                   help="write ROUNDS rounds of prompts per step without calling a model")
    return p


class ShownReporter(Reporter):
    """A run's progress on stderr: a tqdm bar, lines written above it, warnings."""

    def bar(self, **kwargs: Any) -> Bar:
        from tqdm import tqdm

        return tqdm(file=sys.stderr, dynamic_ncols=True, **kwargs)

    def note(self, line: str) -> None:
        from tqdm import tqdm

        tqdm.write(line, file=sys.stderr)

    def warn(self, line: str) -> None:
        sys.stderr.write(line + "\n")


def dispatch(opts: RunOptions) -> int:
    """Run the chosen mode; returns the exit status."""
    if opts.offline is not None:
        return mode_offline(opts)
    if opts.mode == "write-batch":
        return mode_write_batch(opts)
    if opts.mode == "read-batch":
        return mode_read_batch(opts)
    return mode_api(opts)


def mode_offline(opts: RunOptions) -> int:
    from resolver.run import run_offline

    run = run_offline(opts, ShownReporter())
    print(f"offline: {run.samples} samples in {run.steps} steps "
          f"({run.rounds} round(s) x {run.count}, precision "
          f"{run.precision!r}) written to {run.folder} in {run.seconds:.1f}s")
    return 0


def mode_api(opts: RunOptions) -> int:
    """0 ok, 1 failed samples, 130 interrupted."""
    from resolver.run import run_api

    summary = run_api(opts, ShownReporter())
    for line in summary.lines():
        print(line)
    if summary.interrupted:
        print("interrupted: " + resume_hint(summary.folder))
        return 130
    if summary.failed:
        print(f"{summary.failed} sample(s) failed and are not in the results; "
              "run the same command again to retry only those")
        return 1
    return 0


def resume_hint(folder: Path | None) -> str:
    return ("to resume, run the same command again: answered requests come from the cache and "
            f"are not sent again; the partial folder {folder} can then be deleted "
            "(the new run folder holds every sample)")


def round_span(first: int, last: int) -> str:
    """'round 2' or 'rounds 1-3'."""
    return f"round {first}" if first == last else f"rounds {first}-{last}"


def mode_write_batch(opts: RunOptions) -> int:
    from resolver.run import run_write_batch

    done = run_write_batch(opts, ShownReporter())
    plan = done.plan
    if done.path is None:
        print(f"write-batch: all {done.steps} steps are answered in the cache ({done.cache_path}); nothing to "
              "write. Run --mode read-batch (any --batch file) or api mode to write the run folder.")
        return 0
    spans: dict = {}
    for first, last in plan.rounds.values():
        spans[(first, last)] = spans.get((first, last), 0) + 1
    spans_text = ", ".join(f"{round_span(first, last)}: {n} steps" for (first, last), n in sorted(spans.items()))
    print(f"write-batch: {done.lines} requests, {plan.step_rounds} rounds for {len(plan.rounds)} of {done.steps} "
          f"steps ({spans_text}); {plan.complete} steps complete")
    print(f"batch file: {done.path}")
    print(f"next: vllm run-batch -i {done.path} -o output.ndjson --model <path> "
          f"--served-model-name {done.model}")
    print("then: the same runner.py command with --mode read-batch --batch output.ndjson")
    return 0


def mode_read_batch(opts: RunOptions) -> int:
    from resolver.client import ResponseCache
    from resolver.run import import_batch, read_batch, replay_batch

    batch = read_batch(opts, ShownReporter())
    output, unknown = batch.output, batch.unknown
    for problem in output.problems[:20]:
        print(f"batch: {problem}", file=sys.stderr)
    if len(output.problems) > 20:
        print(f"batch: ... and {len(output.problems) - 20} more problem lines", file=sys.stderr)
    if unknown:
        print(f"batch: {len(unknown)} answers have a custom_id that is not a request of this experiment "
              f"(different config, template, sampler, model or seed?) and were ignored; "
              f"first: {unknown[0]}", file=sys.stderr)
    with ResponseCache(opts.cache) as cache:
        import_batch(batch, cache)
        print(f"read-batch: {output.lines} lines, {batch.imported} answers imported into {cache.path}, "
              f"{batch.too_long} prompts too long for the model's context (finished samples), "
              f"{len(output.problems)} problem lines left out, {len(unknown)} unknown ids ignored")
        summary = replay_batch(batch, opts, cache, ShownReporter())
    for line in summary.lines():
        print(line)
    if batch.left_out:
        print(f"read-batch: {batch.left_out} answers left out of the run folder: their steps had "
              "already stopped (adaptive stopping at this --precision), so the folder equals an API run's; "
              "they stay in the cache for a deeper --precision or an API run")
    if summary.incomplete:
        names = ", ".join(name for name, _, _ in summary.incomplete[:5])
        more = "" if len(summary.incomplete) <= 5 else f" and {len(summary.incomplete) - 5} more"
        print(f"{len(summary.incomplete)} steps still need rounds ({names}{more}): run --mode write-batch "
              "again, answer it with vllm run-batch, then --mode read-batch; the last read-batch's "
              "run folder holds every sample (earlier ones can be deleted)")
    else:
        print("all steps complete")
    return 0


def check_paths(opts: RunOptions) -> None:
    """Refuse output and cache paths that cannot work, before any work is done."""
    from pathlib import Path

    from resolver.core import UserError

    output = Path(opts.output)
    if output.exists() and not output.is_dir():
        raise UserError(f"--output {opts.output} is a file; give a directory for the run folders (e.g. results/)")
    refuse_file_parents(opts.output, "--output")
    refuse_file_parents(opts.cache, "--cache")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    opts = RunOptions.from_namespace(args)
    opts.command = ["runner.py", *map(str, sys.argv[1:] if argv is None else argv)]
    check_paths(opts)
    return dispatch(opts)

