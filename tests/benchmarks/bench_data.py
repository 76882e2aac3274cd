"""Benchmark: packing a run folder into a blob (deterministic tar + zstd + sha256).

Input: one run folder of realistic NDJSON (records with ~3 KB answers of varied
words and numbers), --mb megabytes in --files files. Baseline measured in the same
run: the same files read and fed to one streaming zstandard compressor at the same
level, with the compressed bytes hashed -- "tar | zstd | sha256sum" without the
tar, in process. RATIO = pack throughput / baseline throughput (1.0 = the
deterministic tar and the extra content hash cost nothing).

Also reported: unpack (verify + safe extract) and content-hash (what `data.py
status` computes) throughput on the same folder.

    .venv/bin/python tests/benchmarks/bench_data.py [--mb 128] [--files 32]
Last line: the figures and the RATIO. JSON: tests/benchmarks/out/data.json
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import zstandard  # noqa: E402
from benchlib import write_result  # noqa: E402

from resolver.share import blobs as blobs  # noqa: E402

WORDS = ("the value of each term then add carry check again wait so therefore because compute verify sum "
         "list first second third row column total answer step option clue number maybe yes no").split()


def make_folder(root: Path, megabytes: int, files: int) -> Path:
    """A run folder of `files` NDJSON files totalling about `megabytes` MB."""
    rng = random.Random(7)
    folder = root / "2026-01-02_03-04-05_bench_model_zeroshot_greedy"
    folder.mkdir(parents=True)
    per_file = megabytes * 1_000_000 // files
    for i in range(files):
        lines, size, n = [], 0, 0
        while size < per_file:
            answer = " ".join(rng.choice(WORDS) if rng.random() < 0.85 else str(rng.randint(0, 99999))
                              for _ in range(500))
            line = json.dumps({"task": f"{i:03d}_arithmetic", "key": f"{i:03d}_arithmetic-{n}",
                               "answer": answer + f"\nFinal Answer: {rng.randint(0, 999)}",
                               "usage": {"prompt_tokens": rng.randint(100, 900), "completion_tokens": rng.randint(50, 4000)},
                               "is_correct": rng.random() < 0.6})
            lines.append(line)
            size += len(line) + 1
            n += 1
        (folder / f"{i:03d}_arithmetic_length-{i}.ndjson").write_text("\n".join(lines) + "\n")
    return folder


def baseline(folder: Path) -> float:
    """Seconds to read every file, zstd it in one stream at the same level, and hash the output."""
    started = time.perf_counter()
    sha = hashlib.sha256()
    compressor = zstandard.ZstdCompressor(level=blobs.ZSTD_LEVEL, threads=0).compressobj()
    for path in sorted(folder.iterdir()):
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(blobs.CHUNK), b""):
                sha.update(compressor.compress(chunk))
    sha.update(compressor.flush())
    return time.perf_counter() - started


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=128)
    parser.add_argument("--files", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=2, help="best of N for each measurement")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-data-"))
    try:
        folder = make_folder(work, args.mb, args.files)
        size = sum(p.stat().st_size for p in folder.iterdir())
        base_s = min(baseline(folder) for _ in range(args.repeat))
        results = []
        pack_s = min(timed(lambda: results.append(blobs.pack(folder, work / "cache"))) for _ in range(args.repeat))
        result = results[-1]
        blob_file = blobs.blob_path(work / "cache", result.blob)

        def unpack_once():
            shutil.rmtree(work / "out", ignore_errors=True)
            blobs.unpack(blob_file, result.blob, work / "out" / folder.name)

        unpack_s = min(timed(unpack_once) for _ in range(args.repeat))
        hash_s = min(timed(lambda: blobs.content_hash(folder)) for _ in range(args.repeat))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    mb = size / 1e6
    figures = {
        "input_mb": round(mb, 1), "files": args.files, "blob_mb": round(result.size / 1e6, 2),
        "compression": round(size / result.size, 2),
        "baseline_mb_s": round(mb / base_s, 1), "pack_mb_s": round(mb / pack_s, 1),
        "unpack_mb_s": round(mb / unpack_s, 1), "content_hash_mb_s": round(mb / hash_s, 1),
        "ratio": round(base_s / pack_s, 3),
    }
    write_result("data", figures)
    print(f"{mb:.0f} MB in {args.files} files -> blob {figures['blob_mb']} MB (x{figures['compression']})")
    print(f"unpack (verify + safe extract): {figures['unpack_mb_s']} MB/s; "
          f"content hash (status): {figures['content_hash_mb_s']} MB/s")
    print(f"baseline zstd+sha256 {figures['baseline_mb_s']} MB/s, pack {figures['pack_mb_s']} MB/s, "
          f"RATIO pack/baseline = {figures['ratio']}")


if __name__ == "__main__":
    main()
