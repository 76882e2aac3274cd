"""Builders for the data.py and cohort.py tests: realistic cohorts written to a temp dir.

Records follow the runner record of docs/architecture.md field for field, so the
real evaluate.py can ingest what these helpers write. No tests live here.
"""
from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from datetime import datetime, timedelta
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.support.served import served

FIELDS = ("task", "version", "base_task", "key", "input", "target", "response_enum", "genresult",
          "messages", "answer", "usage", "timings", "step", "params", "model", "template", "sampler",
          "guess_chance", "normalized_answer", "extracted_answer", "is_valid", "is_correct",
          "is_truncated", "manifold")


def eval_id(model: str, template: str, sampler: str) -> str:
    """Independent re-statement of the seed's formula (the code under test has its own)."""
    return hashlib.sha256(f"{model}|{template}|{sampler}".encode()).hexdigest()[:6]


def safe(name: str) -> str:
    return name.replace("/", "_")


def folder_name(when: datetime, config: str, model: str, template: str, sampler: str) -> str:
    return f"{when:%Y-%m-%d_%H-%M-%S}_{safe(config)}_{safe(model)}_{safe(template)}_{safe(sampler)}"


def make_record(step: dict, index: int, model: str, template: str, sampler: str, rng: random.Random) -> dict:
    """One graded sample with a long-ish answer and server usage counts."""
    a, b = rng.randint(1, 99), rng.randint(1, 99)
    target = str(a + b)
    correct = rng.random() < step.get("accuracy", 0.6)
    answer_value = target if correct else str(a + b + rng.randint(1, 9))
    words = rng.randint(5, 400)
    answer = " ".join(f"step{i}" for i in range(words)) + f"\nFinal Answer: {answer_value}"
    prompt_tokens = step.get("prompt_tokens", 120)
    completion_tokens = words * 2 + 6
    truncated = completion_tokens > step.get("max_tokens", 10 ** 9)
    record = {
        "task": step["name"], "version": 1, "base_task": step["base_task"],
        "key": f"{step['name']}-{index}", "input": f"What is {a} + {b}?", "target": target,
        "response_enum": None, "genresult": {"a": a, "b": b},
        "messages": [{"role": "user", "content": f"What is {a} + {b}? End with Final Answer: <integer>"}],
        "answer": answer,
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
        "timings": {"termination_reason": "stop", "finish_reason": "stop"},
        "step": step["index"], "params": dict(step["params"], count=step["count"]),
        "model": model, "template": template, "sampler": sampler, "guess_chance": 0.0,
        "normalized_answer": answer_value, "extracted_answer": answer_value,
        "is_valid": True, "is_correct": correct, "is_truncated": truncated,
        "manifold": step.get("manifold", {"id": "default"}),
    }
    if truncated:
        record.update(is_valid=False, is_correct=False, normalized_answer=None, extracted_answer=None)
        record["timings"] = {"termination_reason": "length", "finish_reason": "length"}
    return {k: record[k] for k in FIELDS}


def default_steps(count: int = 8, n_steps: int = 3) -> list:
    steps = []
    for i in range(n_steps):
        params = {"length": 4 + 2 * i}
        steps.append({"index": i, "name": f"{i:03d}_arithmetic_length-{params['length']}",
                      "base_task": "arithmetic", "params": params, "count": count,
                      "manifold": {"id": "default", "degree": 0}})
    return steps


def write_run(cohort_dir: Path, model: str, template: str = "zeroshot-nosys", sampler: str = "greedy-max",
              config: str = "tiny", steps=None, when: datetime | None = None, seed: int = 1) -> Path:
    """A run folder as runner.py writes it: one <step>.ndjson per step."""
    rng = random.Random(seed)
    when = when or datetime(2026, 1, 2, 3, 4, 5) + timedelta(seconds=seed)
    folder = Path(cohort_dir) / folder_name(when, config, model, template, sampler)
    folder.mkdir(parents=True)
    for step in steps or default_steps():
        lines = [json.dumps(make_record(step, i, model, template, sampler, rng)) for i in range(step["count"])]
        (folder / f"{step['name']}.ndjson").write_text("\n".join(lines) + "\n")
    return folder


def eval_entry(cohort_rel: str, model: str, template: str = "zeroshot-nosys", sampler: str = "greedy-max",
               **extra) -> dict:
    entry = {"evaluate": {"glob": f"{cohort_rel}/*_{safe(model)}_{template}_{sampler}/*"},
             "filters": {"model": model, "template": template, "sampler": sampler},
             "label": extra.pop("label", f"{model} ({sampler})"),
             "groups": extra.pop("groups", ["arch:dense", "size:small"]),
             "tags": extra.pop("tags", ["leaderboard"])}
    entry.update(extra)
    return entry


def write_evals(cohort_dir: Path, entries: list) -> None:
    Path(cohort_dir).mkdir(parents=True, exist_ok=True)
    (Path(cohort_dir) / "evals.json").write_text(json.dumps(entries, indent=2) + "\n")


def build_data_dir(root: Path, models=("alpha", "beta"), count: int = 8) -> dict:
    """data/<set>/<model>/ cohorts with one run each, plus data/demo.json; returns paths."""
    data = Path(root) / "data"
    cohorts = {}
    for i, model in enumerate(models):
        cohort = data / "demo" / model
        write_evals(cohort, [eval_entry(f"demo/{model}", model)])
        write_run(cohort, model, steps=default_steps(count), seed=10 + i)
        cohorts[model] = cohort
    dataset = data / "demo.json"
    dataset.write_text(json.dumps({
        "name": "demo", "db": "pointsdb-demo.db", "cache": "demo/.cache", "config": "../configs/tiny.yaml",
        "cohorts": [{"path": f"demo/{m}/evals.json"} for m in models]}, indent=2))
    return {"data": data, "cohorts": cohorts, "dataset": dataset}


def tree_bytes(root: Path) -> dict:
    """{relative path: bytes} of every file under root, for before/after comparisons."""
    root = Path(root)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------- a blob server on loopback


class BlobHandler(SimpleHTTPRequestHandler):
    """Static files with Range support, a request log, and scriptable misbehaviour."""

    def log_message(self, *args):   # keep test output quiet
        pass

    def _fail_now(self) -> bool:
        state = self.server.state
        if state["fail"] > 0:
            state["fail"] -= 1
            self.send_error(503, "try later")
            return True
        return False

    def do_HEAD(self):
        self.server.state["log"].append(("HEAD", self.path, self.headers.get("Range")))
        if not self._fail_now():
            super().do_HEAD()

    def do_GET(self):
        state = self.server.state
        state["log"].append(("GET", self.path, self.headers.get("Range")))
        if self._fail_now():
            return
        path = Path(self.translate_path(self.path))
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        start = 0
        rng = self.headers.get("Range")
        if rng and state["ranges"]:
            start = int(rng.split("=")[1].split("-")[0])
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        stall = state["stall_after"]
        if stall is not None and len(body) > stall:
            self.wfile.write(body[:stall])
            self.wfile.flush()
            state["stalled"].wait(timeout=60)     # hold the connection until the test lets go
            return
        self.wfile.write(body)


class BlobServer:
    """http://127.0.0.1:<port>/ serving a directory; use as a context manager."""

    def __init__(self, root: Path, ranges: bool = True):
        self.state = {"log": [], "fail": 0, "ranges": ranges, "stall_after": None, "stalled": threading.Event()}
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(BlobHandler, directory=str(root)))
        self.httpd.state = self.state
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._serving = served(self.httpd)

    def __enter__(self):
        self._serving.__enter__()
        return self

    def __exit__(self, *exc):
        self.state["stalled"].set()
        self._serving.__exit__(*exc)


def wait_for(predicate, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def config_steps(config_path, precision: str | None = None) -> list:
    """The steps of a real experiment config (manifold.expand_steps), as write_run step dicts."""
    from resolver.config.loader import expand_steps, load_config

    config = load_config(config_path)
    _, level = config.precision_level(precision)
    return [{"index": s.index, "name": s.name, "base_task": s.base_task, "params": dict(s.params),
             "count": level.count, "manifold": dict(s.manifold)} for s in expand_steps(config)]


def build_complete_cohort(root: Path, repo: Path, model: str = "gamma", sampler: str = "greedy-max") -> dict:
    """A cohort whose one eval covers every point of configs/tiny.yaml, named by data/tiny-set.json."""
    import shutil

    (Path(root) / "configs").mkdir(exist_ok=True)
    shutil.copy(repo / "configs" / "tiny.yaml", Path(root) / "configs" / "tiny.yaml")
    data = Path(root) / "data"
    cohort = data / "tiny-set" / model
    write_evals(cohort, [eval_entry(f"data/tiny-set/{model}", model, sampler=sampler, hf_id=None)])
    folder = write_run(cohort, model, sampler=sampler, steps=config_steps(Path(root) / "configs" / "tiny.yaml"), seed=5)
    dataset = data / "tiny-set.json"
    dataset.write_text(json.dumps({"name": "tiny-set", "db": "pointsdb-tiny-set.db", "config": "../configs/tiny.yaml",
                                   "cohorts": [{"path": f"tiny-set/{model}/evals.json"}]}, indent=2))
    return {"data": data, "cohort": cohort, "folder": folder, "dataset": dataset}
