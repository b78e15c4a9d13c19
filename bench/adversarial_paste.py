"""What a hostile paste costs: the Validation page's parsers on adversarial text, and the stall another
thread of the same process sees meanwhile (the interpreter lock is what froze the room, issue 29 item 1).

Each case runs in a child process with a time limit, so a parser that backtracks quadratically is
reported as "over N s" instead of holding the run for minutes. Measured per case: the CPU time of
``parse_startup_log`` and ``parse_benchmark`` together, and the longest gap a ticking thread in the same
process saw between two ticks (1 ms apart) while they ran: what every other student on that server waits.

With ``--live`` it measures the same on a real server instead: ``streamlit run app.py`` on loopback,
students moving the Explorer's batch over Streamlit's websocket protocol (bench/workshop_load.py's
client) and a health probe, first alone, then while one more session pastes the worst text into the
Validation page's box again and again; it prints each phase's update latency and the health probe's.

Run: .venv/bin/python bench/adversarial_paste.py                 (sizes 40,000, 160,000 and 2,000,000)
     .venv/bin/python bench/adversarial_paste.py --sizes 160000 --limit 30
     .venv/bin/python bench/adversarial_paste.py --live --students 5 --seconds 15
     .venv/bin/python bench/adversarial_paste.py --live --students 0 --every 0.2 [--control]
         (no students: the server's CPU per paste, against a normal 1 KB paste with --control)
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

LOG = (ROOT / "tests" / "data" / "vllm_startup_h100.log").read_text()
BENCH = (ROOT / "tests" / "data" / "vllm_bench_serve.txt").read_text()
KEYWORDS = (
    "Model loading took Available KV cache memory: GPU KV cache size: Maximum concurrency for # GPU blocks: "
    "total_memory= activation peak memory non_torch_memory gpu_memory_utilization Setting attention block size to "
    "Successful requests: Total input tokens: Mean TTFT (ms): Maximum request concurrency: max_concurrency= "
)


def _fill(unit: str, size: int, head: str = "") -> str:
    return (head + unit * (size // max(len(unit), 1) + 1))[:size]


SHAPES = {
    # the audit's reproduction (F1): the phrase again and again, never a digit
    "activation phrase, no digits": lambda n: _fill("activation peak memory ", n),
    "non_torch phrase, no digits": lambda n: _fill("non_torch_memory ", n),
    "every line's words, one line": lambda n: _fill(KEYWORDS, n),
    "every line's words, a line each": lambda n: _fill(KEYWORDS.replace(": ", ":\n"), n),
    "digits without a unit": lambda n: _fill("9", n, "Model loading took "),
    "commas and digits": lambda n: _fill("1,", n, "GPU KV cache size: "),
    "blanks after a name": lambda n: _fill(" ", n, "Successful requests:"),
    "equals signs after a name": lambda n: _fill("=", n, "gpu_memory_utilization"),
    "names with digits, no unit": lambda n: _fill("Model loading took 9 ", n),
    "empty lines": lambda n: "\n" * n,
    "real log and benchmark repeated": lambda n: _fill(LOG + BENCH, n),
    "a huge number": lambda n: _fill("9", n, "Total input tokens: "),
}


def one(shape: str, size: int) -> tuple[float, float]:
    """(CPU seconds of both parsers, the longest gap [s] a ticking thread saw) on one input."""
    from core.validation.log_parse import parse_benchmark, parse_startup_log

    for parse in (parse_startup_log, parse_benchmark):  # warm: the message catalog loads on the first error
        with contextlib.suppress(ValueError):
            parse("warm-up")
    text = SHAPES[shape](size)
    gaps, done = [0.0], threading.Event()

    def tick() -> None:
        last = time.perf_counter()
        while not done.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            gaps[0] = max(gaps[0], now - last)
            last = now

    ticker = threading.Thread(target=tick)
    ticker.start()
    time.sleep(0.02)
    start = time.thread_time()
    for parse in (parse_startup_log, parse_benchmark):
        with contextlib.suppress(ValueError):
            parse(text)
    cpu = time.thread_time() - start  # this thread's, not the ticker's
    done.set()
    ticker.join()
    return cpu, gaps[0]


def _url(port: int) -> str:
    return f"ws://127.0.0.1:{port}/_stcore/stream"


async def _paste(port: int, delay: float, seconds: float, every: float, paste: str) -> int:
    """One session, in a process of its own (its client work must not slow the students' client): it
    opens the Validation page, waits ``delay``, then for ``seconds`` sends ``paste`` as the log box's
    value (a new value each time), ``every`` seconds apart. Returns how many it sent."""
    import asyncio

    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from workshop_load import Stats, Student

    class Paster(Student):
        def __init__(self, *args) -> None:
            super().__init__(*args)
            self.boxes: dict[str, str] = {}

        def _read_element(self, element, shown: dict) -> None:
            if element.WhichOneof("type") == "text_area":
                self.boxes[element.text_area.id.rsplit("-", 1)[-1]] = element.text_area.id
            super()._read_element(element, shown)

    one = Paster(_url(port), Stats())
    async with websockets.connect(_url(port), subprotocols=["streamlit"], max_size=None) as one.ws:
        await one.rerun()
        await one.open_page("Validation")
        await asyncio.sleep(delay)
        end, sent = time.monotonic() + seconds, 0
        while time.monotonic() < end and sent < 10_000:
            msg = BackMsg()
            msg.rerun_script.page_script_hash = one.page_hash
            state = msg.rerun_script.widget_states.widgets.add()
            state.id, state.string_value = one.boxes["val_log"], paste + str(sent)
            await one.ws.send(msg.SerializeToString())
            while (await one._receive()).WhichOneof("type") != "script_finished":
                pass
            sent += 1
            await asyncio.sleep(every)
    return sent


async def _students(port: int, pid: int, students: int, seconds: float) -> dict[str, list[float]]:
    """Latencies [s] of the students' updates (the Explorer's batch, 50-150 ms apart) and of health
    probes (50 ms apart), for ``seconds`` alone and then ``seconds`` beside the pastes; and "cpu": the
    server's CPU seconds in each phase."""
    import asyncio
    import random
    import urllib.request

    import websockets
    from workshop_load import Stats, Student
    from workshop_servers import proc_cpu_seconds

    begin = time.monotonic()
    seen: dict[str, list[float]] = {
        f"{what} {when}": [] for what in ("update", "health") for when in ("alone", "paste")
    }

    def phase() -> str:
        return "alone" if time.monotonic() < begin + seconds else "paste"

    async def student(rng: random.Random) -> None:
        stats = Stats()
        one = Student(_url(port), stats)
        async with websockets.connect(_url(port), subprotocols=["streamlit"], max_size=None) as one.ws:
            await one.rerun()
            while time.monotonic() < begin + 2 * seconds:
                count = len(stats.latencies)
                await one.explorer_step(rng)
                seen[f"update {phase()}"] += stats.latencies[count:]
                await asyncio.sleep(rng.uniform(0.05, 0.15))

    def probe() -> float:
        start = time.perf_counter()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=60) as answer:
            answer.read()
        return time.perf_counter() - start

    async def health() -> None:
        while time.monotonic() < begin + 2 * seconds:
            latency = await asyncio.to_thread(probe)
            seen[f"health {phase()}"].append(latency)
            await asyncio.sleep(0.05)

    async def cpu() -> None:
        start = proc_cpu_seconds(pid)
        await asyncio.sleep(seconds)
        middle = proc_cpu_seconds(pid)
        await asyncio.sleep(seconds)
        seen["cpu"] = [middle - start, proc_cpu_seconds(pid) - middle]

    await asyncio.gather(*(student(random.Random(i)) for i in range(students)), health(), cpu())
    return seen


def live(students: int, seconds: float, every: float, control: bool) -> None:
    import asyncio
    import statistics

    from workshop_servers import free_port, start_server

    port = free_port()
    server = start_server(port)
    try:
        what = "the real log" if control else "worst"
        paster = subprocess.Popen(
            [sys.executable, __file__, "--paster", str(port), str(seconds + 2), str(seconds), str(every), what],
            stdout=subprocess.PIPE,
            text=True,
        )
        seen = asyncio.run(_students(port, server.pid, students, seconds + 2))  # 2 s for the paster's page
        sent = paster.communicate(timeout=60)[0].strip()
    finally:
        server.terminate()
        server.wait(timeout=20)
    alone, pasting = seen.pop("cpu")
    print("| what | count | P50 | P95 | max |\n|---|---|---|---|---|")
    for name, times in seen.items():
        if times:
            times = sorted(times)
            p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
            median, top = statistics.median(times), times[-1]
            print(f"| {name} | {len(times)} | {median * 1000:,.0f} ms | {p95 * 1000:,.0f} ms | {top * 1000:,.0f} ms |")
    size = len(LOG) if control else 2_000_000
    extra = (pasting - alone) / max(int(sent), 1)
    print(f"\n{sent} pastes of {size:,} characters, {every:g} s apart; the server's CPU {alone:.1f} s alone, ")
    print(f"{pasting:.1f} s beside the pastes: {extra * 1000:,.0f} ms per paste")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[40_000, 160_000, 2_000_000])
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per case before it is stopped")
    parser.add_argument("--live", action="store_true", help="on a live server, students beside the paste")
    parser.add_argument("--students", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=15.0, help="per phase (alone, then with the paste)")
    parser.add_argument("--every", type=float, default=1.0, help="seconds between two pastes")
    parser.add_argument("--control", action="store_true", help="paste the real 1 KB log instead (a normal rerun)")
    parser.add_argument("--paster", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--one", nargs=2, metavar=("SHAPE", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.live:
        live(args.students, args.seconds, args.every, args.control)
        return
    if args.paster:
        import asyncio

        port, delay, seconds, every, what = args.paster
        paste = LOG if what == "the real log" else SHAPES["activation phrase, no digits"](2_000_000 - 10)
        print(asyncio.run(_paste(int(port), float(delay), float(seconds), float(every), paste)))
        return
    if args.one:
        cpu, gap = one(args.one[0], int(args.one[1]))
        print(f"{cpu:.4f} {gap:.4f}")
        return
    print("| input | " + " | ".join(f"{size:,} chars: CPU / longest stall" for size in args.sizes) + " |")
    print("|---|" + "---|" * len(args.sizes))
    for shape in SHAPES:
        cells = []
        for size in args.sizes:
            try:
                out = subprocess.run(
                    [sys.executable, __file__, "--one", shape, str(size)],
                    capture_output=True,
                    text=True,
                    timeout=args.limit,
                    check=True,
                ).stdout.split()
                cells.append(f"{float(out[0]) * 1000:,.1f} ms / {float(out[1]) * 1000:,.1f} ms")
            except subprocess.TimeoutExpired:
                cells.append(f"over {args.limit:g} s")
        print(f"| {shape} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
