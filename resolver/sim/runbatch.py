"""A stand-in for `vllm run-batch` (docs/simulator.md, *run-batch stand-in*).

    python -m resolver.simulator run-batch -i IN.ndjson -o OUT.ndjson [--config FILE] [--seed N]
        [--gpu h200-8b] [--max-batch N] [--model-load SECONDS] [--stats FILE]

Reads vLLM's batch input lines, answers each as the simulator's server would (same
profile, seed and prompt: the same text), writes vLLM's output lines (the shape
resolver.run.batch reads) and prices the run in virtual time: the model loads once,
then every request is queued at the start and a BatchEngine decodes them all. Nothing
sleeps: a run costing hours of simulated GPU time takes as long as composing the answers.
"""
from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

from resolver.core import UserError
from resolver.sim.app import SimulatorApp, usage_of
from resolver.sim.gpu import BatchEngine, GpuModel, Sequence
from resolver.sim.profiles import PROFILES

__all__ = ["BatchRunStats", "run_batch"]

CHAT_URL = "/v1/chat/completions"


@dataclass
class BatchRunStats:
    """What one run-batch cost, in simulated seconds and tokens."""

    requests: int = 0
    answered: int = 0
    failed: int = 0               # lines answered with an error (unknown model, bad body)
    model_load_seconds: float = 0.0
    busy_seconds: float = 0.0     # decode steps and prefill
    prefill_seconds: float = 0.0
    total_seconds: float = 0.0    # model load + the engine's clock when the last request ended
    tokens_generated: int = 0
    prompt_tokens: int = 0
    max_sequences: int = 0
    decode_steps: int = 0

    def to_json(self) -> dict:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def run_batch(input_path: str | Path, output_path: str | Path, *, app: SimulatorApp, model: GpuModel,
              max_batch: int, model_load_s: float | None = None) -> BatchRunStats:
    """Answer every line of `input_path` into `output_path` (vLLM's output format) and
    return the simulated cost; UserError for a file that is not run-batch input."""
    input_path, output_path = Path(input_path), Path(output_path)
    if not input_path.is_file():
        raise UserError(f"-i {str(input_path)!r} does not exist; give a run-batch input file "
                        "(runner.py --mode write-batch writes one)")
    load = model.model_load_s if model_load_s is None else model_load_s
    if load < 0:
        raise UserError(f"--model-load {load:g} is not valid; use 0 or more seconds")
    engine = BatchEngine(model, max_batch)
    stats = BatchRunStats(model_load_seconds=load)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = output_path.with_name(output_path.name + ".part")
    with open(input_path, encoding="utf-8") as src, open(tmp, "w", encoding="utf-8") as out:
        for line_no, line in enumerate(src, 1):
            if not line.strip():
                continue
            custom_id, body = _request(line, line_no, input_path)
            stats.requests += 1
            result = _answer(app, custom_id, body, engine)
            stats.failed += result["error"] is not None
            out.write(json.dumps(result, ensure_ascii=False) + "\n")
    tmp.replace(output_path)
    engine.run_to_end()
    stats.answered = stats.requests - stats.failed
    s = engine.stats
    stats.busy_seconds, stats.prefill_seconds = s.busy_seconds, s.prefill_seconds
    stats.total_seconds = load + engine.clock
    stats.tokens_generated, stats.prompt_tokens, stats.max_sequences = s.tokens_generated, s.prompt_tokens, s.max_sequences
    stats.decode_steps = s.decode_steps
    return stats


def _request(line: str, line_no: int, path: Path) -> tuple[str, dict]:
    """(custom_id, body) of one input line; vLLM refuses the whole file on a bad one, so do we."""
    where = f"{path.name} line {line_no}"
    try:
        obj = json.loads(line)
    except ValueError:
        raise UserError(f"{where} is not JSON; each line must be "
                        '{"custom_id", "method", "url", "body"}') from None
    if not isinstance(obj, dict) or not isinstance(obj.get("custom_id"), str) or not isinstance(obj.get("body"), dict):
        raise UserError(f'{where} needs a string "custom_id" and an object "body" (vLLM run-batch input)')
    if obj.get("url", CHAT_URL) != CHAT_URL:
        raise UserError(f"{where}: url {obj.get('url')!r} is not served; the stand-in answers {CHAT_URL} only")
    return obj["custom_id"], obj["body"]


def _answer(app: SimulatorApp, custom_id: str, body: dict, engine: BatchEngine) -> dict:
    """One output line; an answered request joins the engine's queue."""
    request_id = f"vllm-batch-{uuid.uuid4().hex}"
    line = {"id": f"vllm-{uuid.uuid4().hex}", "custom_id": custom_id}
    model = body.get("model")
    profile = PROFILES.get(model) if isinstance(model, str) else None
    if not isinstance(body.get("messages"), list) or not body["messages"]:
        return _failed(line, request_id, 400, "'messages' must be a non-empty list", "BadRequestError")
    if profile is None:
        return _failed(line, request_id, 404, f"The model `{model}` does not exist. Available: {', '.join(PROFILES)}",
                       "NotFoundError")
    answer, prompt_tokens = app.answer(profile, body)
    usage = usage_of(answer, prompt_tokens)
    engine.submit(Sequence(prompt_tokens, answer.completion_tokens))
    return {**line, "response": {"status_code": 200, "request_id": request_id,
                                 "body": app.completion_object(body, answer, usage)}, "error": None}


def _failed(line: dict, request_id: str, status: int, message: str, kind: str) -> dict:
    """A request vLLM would refuse: its status, no body, an OpenAI-shaped error."""
    return {**line, "response": {"status_code": status, "request_id": request_id, "body": None},
            "error": {"message": message, "type": kind, "code": status}}
