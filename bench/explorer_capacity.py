"""How many Explorer reruns one server process serves per second, saturated.

    .venv/bin/python bench/explorer_capacity.py [--clients 4] [--seconds 30]

Starts one ``streamlit run`` on loopback and ``--clients`` websocket clients (bench/workshop_load.py's
Student, which speaks Streamlit's protocol as a browser does) that move the Explorer's batch slider
with no pause between reruns, so the process is never idle. Batches cycle through 1-256 (the
sweep behind the speed charts is computed once and then cached, as in a class moving one slider).
Every shown throughput is checked against core. Prints reruns per second and the server's CPU
time per rerun (from /proc): 1000 ms divided by that is the ceiling of one process on one core.
Issue 17 asks for at least 30 reruns per second; docs/benchmarks.md records runs.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from workshop_load import Stats, Student  # noqa: E402
from workshop_servers import HOST, free_port, proc_cpu_seconds, start_server  # noqa: E402


async def _client(url: str, stats: Stats, seconds: float, seed: int) -> None:
    student = Student(url, stats)
    async with await student._connect() as ws:
        student.ws = ws
        await student.rerun()  # the first page load: the Explorer
        await student.explorer_step(random.Random(seed))  # the first step computes the sweep
        stats.latencies.clear()
        rng, end = random.Random(seed), time.monotonic() + seconds
        while time.monotonic() < end:
            await student.explorer_step(rng)


async def _clients(url: str, clients: int, seconds: float) -> Stats:
    stats = Stats()
    await asyncio.gather(*(_client(url, stats, seconds, seed) for seed in range(clients)))
    return stats


def measure(clients: int, seconds: float) -> dict:
    port = free_port()
    server = start_server(port)
    url = f"ws://{HOST}:{port}/_stcore/stream"
    try:
        asyncio.run(_clients(url, 1, 2.0))  # warm-up: imports, catalog, first sweep
        cpu_before, start = proc_cpu_seconds(server.pid), time.monotonic()
        stats = asyncio.run(_clients(url, clients, seconds))
        wall, cpu = time.monotonic() - start, proc_cpu_seconds(server.pid) - cpu_before
    finally:
        server.terminate()
        server.wait(timeout=20)
    return {
        "clients": clients,
        "reruns": stats.reruns,
        "reruns_per_s": stats.reruns / wall,
        "server_cpu_ms_per_rerun": cpu / stats.reruns * 1e3,
        "server_cpu_share": cpu / wall,
        "latency_p50_ms": statistics.median(stats.latencies) * 1e3,
        "errors": len(stats.errors),
        "wrong_values": len(stats.wrong),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    r = measure(args.clients, args.seconds)
    print(
        f"{r['clients']} clients, {r['reruns']} Explorer reruns: {r['reruns_per_s']:.1f} reruns/s, "
        f"server CPU {r['server_cpu_ms_per_rerun']:.0f} ms per rerun ({r['server_cpu_share']:.0%} of a core), "
        f"P50 {r['latency_p50_ms']:.0f} ms, errors {r['errors']}, wrong values {r['wrong_values']}"
    )


if __name__ == "__main__":
    main()
