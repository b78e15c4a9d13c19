"""What a hostile paste costs: the Validation page's parsers on adversarial text, and the stall another
thread of the same process sees meanwhile (the interpreter lock is what froze the room, issue 29 item 1).

Each case runs in a child process with a time limit, so a parser that backtracks quadratically is
reported as "over N s" instead of holding the run for minutes. Measured per case: the CPU time of
``parse_startup_log`` and ``parse_benchmark`` together, and the longest gap a ticking thread in the same
process saw between two ticks (1 ms apart) while they ran: what every other student on that server waits.

Run: .venv/bin/python bench/adversarial_paste.py                 (sizes 40,000, 160,000 and 2,000,000)
     .venv/bin/python bench/adversarial_paste.py --sizes 160000 --limit 30
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[40_000, 160_000, 2_000_000])
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per case before it is stopped")
    parser.add_argument("--one", nargs=2, metavar=("SHAPE", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
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
