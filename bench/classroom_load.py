"""Class load and failover run: N simulated students answer the Workshop's seven exercises, a teacher watches.

Each student is a browser tab speaking Streamlit's websocket protocol (bench/classroom_client.py). It opens the
Workshop page with the class's join link (``?class=<join code>``; the students arrive one after another over
``--join-over`` seconds), joins with a unique nickname (some in Chinese, some with ``<b>`` or ``*markdown*``),
then works the exercises in order, ``--think`` seconds apart (default 5-15 s: a class at about thirty times a real
one's pace, where a student checks an exercise every few minutes): opens one, fills every answer box and sends the
check; on some exercises it first makes a slip (a GiB figure read as GB, x 1.073741824; another box's known slip)
and then sends the right answer, on some it leaves a box wrong. Meanwhile its class bar's timer reruns that
fragment as a browser's does. A teacher tab (``?teach=<class id>``, the teacher key typed in its form) stays open
the whole time; its live view reruns on its own timer (the page's ``run_every``) and the bench reads the progress
table each time, and once more from a full rerun when the students are done.

Recorded: the answer round trip (check sent -> script finished) P50/P95/max; answers sent; answers recorded (the
database's rows, by student, exercise and box); lost (changes the students sent that are not in the database) and
duplicates (rows beyond them); the teacher's table at the end, the counts the bench derives from what its students
sent, and ``store.progress``: all three must be equal; errors (exceptions on a page, connection errors), wrong
pages (a check whose verdicts, one alert per box, or whose "Recorded ... N new" note was not what the bench
expects) and reconnects; the round trips per 30 s window; the CPU of the servers and of the bench itself.

``--kill-one`` (behind HAProxy): when half of the checks are sent, one Streamlit process of deploy/serve.py is
killed with SIGKILL. Its students' websockets drop; each reconnects through HAProxy as a browser reloading does (a
page load, a new websocket, the URL's ``class=..&seat=..``), sends again the check it had no reply for, and goes
on. Recorded: the time from noticing the drop to the page shown again, and a resent check's time from its first
send to its verdicts; nothing may be lost or recorded twice. A tab notices a drop when it next sends (a check or
its fragment timer), as a browser notices when its websocket closes.

Run:  .venv/bin/python bench/classroom_load.py --students 120 --servers 3 --haproxy
      .venv/bin/python bench/classroom_load.py --students 120 --servers 3 --haproxy --kill-one
      .venv/bin/python bench/classroom_load.py --students 30 --postgres        (a throwaway PostgreSQL server)
      .venv/bin/python bench/classroom_load.py --students 30 --database-url postgresql://...  (--json: all figures)
Only loopback is ever contacted (a --database-url must name a local socket or loopback host); every loop is
bounded in count and time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import tempfile
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from classroom_class import ClassRun, planned_checks  # noqa: E402
from workshop_servers import HOST, free_port, haproxy_stack, proc_cpu_seconds, start_server  # noqa: E402

from core.classroom.store import open_store  # noqa: E402

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "")


def _targets(ports: list[int]) -> list[tuple[str, str | None]]:
    return [(f"ws://{HOST}:{port}/_stcore/stream", None) for port in ports]


def run_class(
    students: int,
    seconds_budget: float,
    servers: int = 1,
    haproxy: bool = False,
    database_url: str | None = None,
    kill_one: bool = False,
    think: tuple[float, float] = (5.0, 15.0),
    seed: int = 0,
    join_over_s: float = 0.0,
) -> dict:
    """Start the servers (``servers`` ``streamlit run`` processes, students spread evenly and sticky; or with
    ``haproxy`` deploy/serve.py's stack), on a fresh SQLite file or ``database_url``; create a class; run it
    (the students join one after another over ``join_over_s``); stop everything. Returns the figures (module
    docstring)."""
    if kill_one and not haproxy:
        raise ValueError("kill_one needs haproxy: without a balancer the students have nowhere to go")
    with tempfile.TemporaryDirectory(prefix="classroom-load-") as tmp:
        env_name, env_value = ("DATABASE_URL", database_url) if database_url else ("EXPLORER_CLASS_DB", f"{tmp}/c.db")
        saved = {name: os.environ.pop(name, None) for name in ("DATABASE_URL", "EXPLORER_CLASS_DB")}
        os.environ[env_name] = env_value  # the servers inherit it
        store = open_store(path=None if database_url else env_value, url=database_url)
        try:
            room = store.create_class("en", 1)
            if haproxy:
                with haproxy_stack(servers) as stack:
                    ws = "ws" + stack.url.removeprefix("http") + "/_stcore/stream"
                    run = ClassRun(room, store, [(ws, stack.url)], students, think, seed)
                    run.join_over_s = join_over_s
                    streamlits = [pid for pid, cmd in stack.children().items() if "streamlit" in cmd]
                    cpu = _cpu(streamlits)
                    if kill_one:
                        run.kill_after = planned_checks(students, seed) // 2
                        run.kill = lambda: _kill_one(stack)
                    result = run.go(seconds_budget, warm=servers)
                    result["server_cpu_share_of_one_core"] = (_cpu(streamlits) - cpu) / result["wall_s"]
            else:
                ports = [free_port() for _ in range(servers)]
                procs = []
                try:
                    procs = [start_server(port) for port in ports]
                    run = ClassRun(room, store, _targets(ports), students, think, seed)
                    run.join_over_s = join_over_s
                    cpu = _cpu([p.pid for p in procs])
                    result = run.go(seconds_budget, warm=servers)
                    result["server_cpu_share_of_one_core"] = (_cpu([p.pid for p in procs]) - cpu) / result["wall_s"]
                finally:
                    for proc in procs:
                        proc.terminate()
                    for proc in procs:
                        proc.wait(timeout=20)
            result.update(
                servers=servers,
                haproxy=haproxy,
                database=store.backend,
                kill_one=kill_one,
                think_s=list(think),
                join_over_s=join_over_s,
                cpu_cores=os.cpu_count(),
            )
            return result
        finally:
            store.close()
            for name, value in saved.items():
                os.environ.pop(name, None)
                if value is not None:
                    os.environ[name] = value


def _cpu(pids: list[int]) -> float:
    """CPU seconds of the processes still running (a killed one's are lost: the figure is then a floor)."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            total += proc_cpu_seconds(pid)
    return total


def _kill_one(stack) -> dict:
    """SIGKILL the first Streamlit process of the stack; what was killed (pid, port)."""
    streamlits = {pid: cmd for pid, cmd in stack.children().items() if "streamlit" in cmd}
    pid = min(streamlits)
    argv = streamlits[pid].split()
    port = argv[argv.index("--server.port") + 1] if "--server.port" in argv else "?"
    os.kill(pid, signal.SIGKILL)
    return {"pid": pid, "port": port}


@contextlib.contextmanager
def _postgres():
    """A throwaway PostgreSQL server (tests/classroom_pg.py) and one database on it: its URL."""
    sys.path.insert(0, str(ROOT / "tests"))
    from classroom_pg import postgres_server

    with postgres_server() as server:
        yield server.new_database()


def _loopback_url(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    host = urllib.parse.parse_qs(parts.query).get("host", [""])[0]
    return (parts.hostname or "") in LOOPBACK_NAMES and (not host or host.startswith("/") or host in LOOPBACK_NAMES)


def _summary(r: dict) -> str:
    lat, rec, across = r["round_trip_ms"], r["reconnect_ms"], r["check_across_drop_ms"]
    lines = [
        f"{r['students']} students, {r['servers']} process(es){' behind HAProxy' if r['haproxy'] else ''}, "
        f"{r['database']}, {r['cpu_cores']} CPU cores{', one process killed' if r['kill_one'] else ''}",
        f"  answer round trip ms: P50 {lat['p50']:.0f}  P95 {lat['p95']:.0f}  max {lat['max']:.0f}  "
        f"({r['checks_sent']} checks sent, {r['wall_s']:.0f} s, the bench's own CPU "
        f"{r['client_cpu_share_of_one_core']:.0%} of a core, the servers' {r['server_cpu_share_of_one_core']:.0%}, "
        f"the machine's {r.get('machine_busy_cores', float('nan')):.2f} cores busy)",
        "  by 30 s window, P50/P95 ms: "
        + ", ".join(f"{w['p50']:.0f}/{w['p95']:.0f}" for w in r["round_trip_ms_by_30s"] if w["checks"]),
        f"  answers: intended {r['answers_intended']}, recorded {r['answers_recorded']}, lost {r['lost']}, "
        f"duplicates {r['duplicates']}",
        f"  teacher table == bench tally == store.progress: {r['teacher_equal']}  "
        f"(students finished {r['students_finished']}/{r['students']})",
        f"  errors {len(r['errors'])}, wrong page answers {len(r['wrong_page'])}, reconnects {r['reconnects']}",
    ]
    if r["reconnects"]:
        lines.append(f"  reconnect ms P50 {rec['p50']:.0f} max {rec['max']:.0f}")
    if across["p50"] is not None:
        lines.append(
            f"  a check across the drop, first send to verdicts, ms P50 {across['p50']:.0f} max {across['max']:.0f}"
        )
    lines += [f"    {e}" for e in (r["errors"] + r["wrong_page"])[:10]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--servers", type=int, default=1, help="Streamlit processes")
    parser.add_argument("--haproxy", action="store_true", help="deploy/serve.py: --servers processes behind HAProxy")
    parser.add_argument("--kill-one", action="store_true", help="SIGKILL one process midway (needs --haproxy)")
    db = parser.add_mutually_exclusive_group()
    db.add_argument("--database-url", help="a PostgreSQL URL on this machine (default: a fresh SQLite file)")
    db.add_argument("--postgres", action="store_true", help="start a throwaway PostgreSQL server (initdb)")
    parser.add_argument("--seconds", type=float, default=600.0, help="time budget; students stop when it is spent")
    parser.add_argument(
        "--think", type=float, nargs=2, default=(5.0, 15.0), metavar=("MIN", "MAX"), help="seconds between checks"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--join-over", type=float, default=30.0, help="seconds over which the students join")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not 1 <= args.students <= 300 or not 1 <= args.servers <= 8 or not 1 <= args.seconds <= 1800:
        parser.error("--students must be 1-300, --servers 1-8 and --seconds 1-1800")
    if args.kill_one and not args.haproxy:
        parser.error("--kill-one needs --haproxy")
    if args.database_url and not _loopback_url(args.database_url):
        parser.error("--database-url must name a database on this machine (loopback or a unix socket)")
    if not 0 <= args.think[0] <= args.think[1] <= 300:
        parser.error("--think MIN MAX must be 0 <= MIN <= MAX <= 300 seconds")
    if not 0 <= args.join_over <= 600:
        parser.error("--join-over must be 0 to 600 seconds")
    run = dict(
        students=args.students,
        seconds_budget=args.seconds,
        servers=args.servers,
        haproxy=args.haproxy,
        kill_one=args.kill_one,
        think=tuple(args.think),
        seed=args.seed,
        join_over_s=args.join_over,
    )
    if args.postgres:
        with _postgres() as url:
            result = run_class(**run, database_url=url)
    else:
        result = run_class(**run, database_url=args.database_url)
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else _summary(result))
    ok = result["teacher_equal"] and not (result["lost"] or result["duplicates"] or result["errors"])
    return 0 if ok and not result["wrong_page"] else 1


if __name__ == "__main__":
    sys.exit(main())
