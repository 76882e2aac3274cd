"""Benchmark: the streaming loop rule's CPU cost per MB of streamed text (docs/loops.md, *Cost*).

Streams: answers of 2k-30k characters -- healthy prose (never stopped: the watch sees every
character), legitimate answers that repeat a shape (a markdown table, a list of similar lines)
and verbatim loops (stopped early, so cheaper) -- fed as 80-character deltas and as
per-token deltas (about 4 characters). Baselines measured in the same run on the same deltas: only
accumulating them (list append, one join at the end), and reading each delta's server-sent
JSON chunk (json.loads), both of which a streaming client does anyway. RATIO = CPU of
accumulating with the watch / CPU of the baseline, per delta size.

    .venv/bin/python tests/benchmarks/bench_loop_watch.py
"""
from __future__ import annotations

import json
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchlib import write_result  # noqa: E402

from resolver.grading import LoopWatch  # noqa: E402
from resolver.sim.profiles import reasoning_prose, sentence_pool  # noqa: E402

WORDS = ["the value", "row four", "column two", "the total", "the third car", "Monday", "option (C)"]
_PIECE = re.compile(r"\s*\S+|\s+")      # a word with the spaces before it: about one token


def _streams(count: int) -> list[str]:
    rng = random.Random(11)
    pool = sentence_pool(WORDS)
    out = []
    for i in range(count):
        size = rng.randint(2_000, 30_000)
        prose, _, _ = reasoning_prose(rng, pool, size // 4)
        kind = i % 4
        if kind == 0:
            out.append(prose[:size])
        elif kind == 1:
            rows = "".join(f"| {r} | {r * 7 % 13} | {r * r % 97} | item {r % 5} |\n" for r in range(size // 30))
            out.append(prose[:size // 3] + "\n| n | a | b | name |\n|---|---|---|---|\n" + rows)
        elif kind == 2:
            lines = "".join(f"The {k}th candidate is not {WORDS[k % 7]}, so it is ruled out.\n"
                            for k in range(size // 50))
            out.append(prose[:size // 3] + lines)
        else:
            out.append(prose[:size // 3] + "Wait, let me recount the value once more.\n" * (size // 40))
    return [text[:30_000] for text in out]


def _deltas(text: str, per_token: bool) -> list[str]:
    return _PIECE.findall(text) if per_token else [text[i:i + 80] for i in range(0, len(text), 80)]


def _accumulate(deltas: list[str]) -> None:
    parts = []
    for delta in deltas:
        parts.append(delta)
    "".join(parts)


def _parse(chunks: list[str]) -> None:
    # what a streaming client does per delta anyway: read the server-sent chunk's JSON
    parts = []
    for chunk in chunks:
        parts.append(json.loads(chunk)["choices"][0]["delta"]["content"])
    "".join(parts)


def _watch(deltas: list[str]) -> None:
    watch = LoopWatch()
    parts = []
    for delta in deltas:
        parts.append(delta)
        if watch.feed(delta) is not None:
            break
    "".join(parts)


def _cpu(fn, streams: list[list[str]], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for deltas in streams:
            fn(deltas)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    texts = _streams(48)
    megabytes = sum(len(t) for t in texts) / 1e6
    result: dict = {"streams": len(texts), "megabytes": round(megabytes, 3),
                    "chars": [min(map(len, texts)), max(map(len, texts))]}
    print(f"{len(texts)} streams, {megabytes:.2f} MB ({result['chars'][0]:,}-{result['chars'][1]:,} characters)")
    for label, per_token in (("80-char deltas", False), ("per-token deltas", True)):
        streams = [_deltas(t, per_token) for t in texts]
        chunks = [[json.dumps({"choices": [{"index": 0, "delta": {"content": d}}]}) for d in s] for s in streams]
        base = _cpu(_accumulate, streams, 5)
        parse = _cpu(_parse, chunks, 5)
        watch = _cpu(_watch, streams, 5)
        deltas = sum(map(len, streams))
        key = "per_token" if per_token else "chars_80"
        result[key] = {"deltas": deltas, "accumulate_cpu_s_per_mb": base / megabytes,
                       "parse_json_cpu_s_per_mb": parse / megabytes,
                       "watch_cpu_s_per_mb": watch / megabytes, "ratio": watch / base, "ratio_to_parse": watch / parse}
        print(f"{label}: {deltas:,} deltas; CPU per MB: accumulate only {1e3 * base / megabytes:.2f} ms, "
              f"parse each chunk's JSON {1e3 * parse / megabytes:.2f} ms, accumulate + watch "
              f"{1e3 * watch / megabytes:.2f} ms")
        print(f"  RATIO watch/accumulate = {watch / base:.2f}; RATIO watch/parse = {watch / parse:.2f}")
    # 256 streams at 50 tokens/s of ~4 characters: 51,200 characters/s
    load = 256 * 50 * 4 / 1e6
    share = result["per_token"]["watch_cpu_s_per_mb"] * load
    result["share_of_one_core_at_256_streams"] = share
    print(f"256 streams x 50 tokens/s (per-token deltas): {100 * share:.2f}% of one core")
    write_result("loop_watch", result)


if __name__ == "__main__":
    main()
