"""Simulator throughput benchmark (docs/performance.md: >= 2,000 requests/s on one core, zero latency).

    .venv/bin/python tests/benchmarks/bench_simulator.py [--requests 6000] [--concurrency 64]

The simulator runs as a subprocess pinned to CPU 0 (one core), zero latency,
recognising real prompts of a 36-step config (model sim-strong, greedy-2k). The
load generator (aiohttp, pinned to CPU 1) sends the prompts the runner would send.
Baseline in the same run: a bare aiohttp server on the same core that returns one
fixed, pre-serialised completion of the same size, i.e. the most any aiohttp
server can do on this core for this client. Each side: best of --repeats.
Prints both rates and, on the last line, the ratio simulator/bare.
Result: tests/benchmarks/out/simulator.json.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import aiohttp

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_runner import bench_config, runner_requests  # noqa: E402
from benchlib import free_port, write_result  # noqa: E402

from resolver.sim.simulator import start_simulator_process  # noqa: E402

BARE_SERVER = textwrap.dedent("""
    import sys
    from aiohttp import web
    body = open(sys.argv[2], "rb").read()

    async def chat(request):
        await request.read()
        return web.Response(body=body, content_type="application/json")

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    try:  # the same event loop the simulator uses
        import asyncio, uvloop
        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    except ImportError:
        pass
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None, print=None)
""")



async def load(url: str, bodies: list[bytes], concurrency: int) -> float:
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        gate = asyncio.Semaphore(concurrency)

        async def one(body: bytes):
            async with gate:
                async with session.post(f"{url}/v1/chat/completions", data=body,
                                        headers={"Content-Type": "application/json"}) as resp:
                    await resp.read()
                    assert resp.status == 200

        started = time.perf_counter()
        await asyncio.gather(*(one(b) for b in bodies))
        return len(bodies) / (time.perf_counter() - started)


def measure(pid: int, url: str, bodies: list[bytes], args) -> tuple[list[float], list[float]]:
    """Wall-clock requests/s, and requests per CPU-second of the server process.

    The second figure is what one dedicated core would serve: on a machine
    shared with other jobs the wall rate also counts time the server spent
    waiting for the CPU.
    """
    rates, per_cpu = [], []
    for _ in range(args.repeats):
        before = cpu_seconds(pid)
        rates.append(asyncio.run(load(url, bodies, args.concurrency)))
        per_cpu.append(len(bodies) / max(1e-9, cpu_seconds(pid) - before))
    return rates, per_cpu


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_bare(reply: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", BARE_SERVER, str(port), str(reply)],
                            preexec_fn=lambda: os.sched_setaffinity(0, {0}))
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, url
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("bare server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=6000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        config = bench_config(tmp / "bench.yaml", args.requests)
        bodies = runner_requests(config)
        os.sched_setaffinity(0, {1})
        sim = start_simulator_process(str(config), latency_ms=0, cpu=0)
        try:
            # A real answer of typical size is the bare server's fixed reply.
            asyncio.run(load(sim.url, bodies[:200], args.concurrency))          # warm-up
            sim_rates, sim_cpu = measure(sim.pid, sim.url, bodies, args)
            stats = sim.stats()
        finally:
            sim.stop()
        sample = json.loads(_one_reply(bodies[len(bodies) // 2], config))
        reply = tmp / "reply.json"
        reply.write_text(json.dumps(sample))
        bare, url = start_bare(reply)
        try:
            asyncio.run(load(url, bodies[:200], args.concurrency))
            bare_rates, bare_cpu = measure(bare.pid, url, bodies, args)
        finally:
            bare.terminate()
            bare.wait()
    assert stats["unrecognised"] == 0, stats
    result = {"requests": len(bodies), "concurrency": args.concurrency,
              "simulator_rate": max(sim_rates), "bare_rate": max(bare_rates),
              "simulator_per_cpu_second": max(sim_cpu), "bare_per_cpu_second": max(bare_cpu),
              "ratio": max(sim_rates) / max(bare_rates), "bar_rate": 2000,
              "reply_bytes": reply_size(sample), "load_average": os.getloadavg()[0]}
    write_result("simulator", result)
    print(f"load average {result['load_average']:.1f} on {os.cpu_count()} cores")
    print(f"simulator (one core, zero latency): {', '.join(f'{r:.0f}' for r in sim_rates)} requests/s wall; "
          f"{', '.join(f'{r:.0f}' for r in sim_cpu)} requests per CPU-second")
    print(f"bare aiohttp, fixed {result['reply_bytes']}-byte reply: {', '.join(f'{r:.0f}' for r in bare_rates)} "
          f"requests/s wall; {', '.join(f'{r:.0f}' for r in bare_cpu)} requests per CPU-second")
    print(f"best: simulator {result['simulator_rate']:.0f} requests/s wall, "
          f"{result['simulator_per_cpu_second']:.0f} per CPU-second (bar >= 2000); "
          f"bare {result['bare_rate']:.0f} requests/s wall")
    print(f"RATIO simulator/bare (wall) = {result['ratio']:.2f}")


def reply_size(sample: dict) -> int:
    return len(json.dumps(sample))


def _one_reply(body: bytes, config: Path) -> bytes:
    """One genuine simulator reply for the body (from an in-process simulator)."""
    import urllib.request

    from resolver.sim.simulator import SimulatorServer
    with SimulatorServer(str(config)) as server:
        req = urllib.request.Request(f"{server.url}/v1/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.read()


if __name__ == "__main__":
    main()
