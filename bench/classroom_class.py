"""A class run for bench/classroom_load.py: what each student types (``plan``), the students and the teacher as
browser tabs (bench/classroom_client.py), and the checks at the end (the database's rows against what was sent,
the teacher's table against the bench's own tally and ``store.progress``)."""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import re
import time
import urllib.parse
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from classroom_client import ERROR, SUCCESS, Dropped, Tab
from sqlalchemy import select

from core.classroom.records import NewClass
from core.classroom.schema import Answer
from core.classroom.store import ClassStore
from core.teaching.answer_boxes import GB_PER_GIB, Box, boxes
from core.teaching.answer_check import check
from core.teaching.exercises import load_exercises

EXERCISES = tuple(ex.id for ex in load_exercises())
BOXES = {ex: boxes(ex) for ex in EXERCISES}
RECORDED = re.compile(r"Recorded for your teacher: (\d+) new of (\d+) checked")
TEACHER_COLUMNS = ("Exercise", "Not started", "Answered", "All right")
TEACHER_LOOK_S = 1.0  # how often the teacher's tab looks whether the class is done (its page polls itself)
SLIP_SHARE, LEAVE_WRONG_SHARE = 0.3, 0.1  # exercises a student first gets wrong, and leaves wrong
RECONNECT_TRIES, RECONNECT_WAIT_S = 20, 0.5  # a student gives up after this many failed page loads
MAX_STEPS = 100  # checks per student, a hard bound beside the time budget


def right(box: Box) -> str:
    """The expected value as the student types it: a number in the box's unit."""
    return f"{box.expected / box.scale:.6g}"


def wrong(box: Box) -> str:
    """A slip's value in the box's unit: GB read as GiB for a GiB box, else the box's first slip (x 3 if none)."""
    if box.unit == "GiB":
        value = box.expected / box.scale * GB_PER_GIB
    else:
        value = (box.slips[0].value if box.slips else box.expected * 3) / box.scale
    return f"{value:.6g}"


def nickname(i: int) -> str:
    """Unique per student; some in Chinese, some with HTML or Markdown the page must show as text."""
    return (f"学生 {i} 号", f"<b>bold {i}</b>", f"*md* _{i}_", f"student {i}")[i % 4]


def plan(seed: int, i: int) -> list[tuple[str, dict[str, str]]]:
    """Student ``i``'s checks in order: (exercise, {box: typed}). A slip: one box wrong, then all right; left
    wrong: the last check keeps one box wrong."""
    rng = random.Random(seed * 100_003 + i)
    checks = []
    for ex in EXERCISES:
        good = {b.name: right(b) for b in BOXES[ex]}
        draw = rng.random()
        if draw < SLIP_SHARE + LEAVE_WRONG_SHARE:
            box = rng.choice(BOXES[ex])
            checks.append((ex, {**good, box.name: wrong(box)}))
            if draw < SLIP_SHARE:
                checks.append((ex, good))
        else:
            checks.append((ex, good))
    return checks


def planned_checks(students: int, seed: int) -> int:
    return sum(len(plan(seed, i)) for i in range(students))


def machine_busy_s() -> float:
    """CPU seconds the whole machine has been busy since boot, all cores (/proc/stat: all but idle and iowait)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def _verdicts(ex: str, typed: dict[str, str]) -> dict[str, bool]:
    return {box: check(ex, box, value, "en").correct for box, value in typed.items()}


def _quantiles(values: list[float]) -> dict:
    """P50, P95 (nearest rank) and max; None without values."""
    ordered = sorted(values)
    if not ordered:
        return {"p50": None, "p95": None, "max": None}
    rank = lambda q: ordered[max(0, math.ceil(q * len(ordered)) - 1)]  # noqa: E731
    return {"p50": rank(0.5), "p95": rank(0.95), "max": ordered[-1]}


@dataclass
class Tally:
    """What the students sent, as the bench saw it: per (seat, exercise, box) the values that changed it."""

    changes: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)
    correct: dict[tuple[str, str, str], bool] = field(default_factory=dict)  # the latest one's verdict

    def sent(self, seat: str, ex: str, typed: dict[str, str], verdicts: dict[str, bool]) -> None:
        for box, value in typed.items():
            key = (seat, ex, box)
            history = self.changes.setdefault(key, [])
            if not history or history[-1] != value:  # the store records a box's answer once per change
                history.append(value)
            self.correct[key] = verdicts[box]


def expected_counts(tally: Tally, seats: list[str]) -> list[tuple[int, int, int]]:
    """Per exercise: (not started, answered, all right) from the bench's tally, as the teacher's table counts."""
    rows = []
    for ex in EXERCISES:
        started = [s for s in seats if any((s, ex, b.name) in tally.correct for b in BOXES[ex])]
        done = [s for s in started if all(tally.correct.get((s, ex, b.name), False) for b in BOXES[ex])]
        rows.append((len(seats) - len(started), len(started) - len(done), len(done)))
    return rows


class ClassRun:
    """One class: ``targets`` (websocket URL, HTTP base or None) the students are spread over."""

    def __init__(self, room: NewClass, store: ClassStore, targets, students: int, think, seed: int) -> None:
        self.room, self.store, self.targets, self.students = room, store, targets, students
        self.think, self.seed = think, seed
        self.tally, self.seats = Tally(), []
        self.round_trips: list[float] = []
        self.sent_at: list[float] = []  # when each answered check was sent [s from the start]
        self.join_ms: list[float] = []
        self.join_over_s, self.start = 0.0, 0.0
        self.reconnect_ms: list[float] = []
        self.recovered_ms: list[float] = []
        self.drops: list[str] = []  # why each reconnect was needed
        self.teacher_ms: list[float] = []
        self.errors: list[str] = []
        self.wrong_page: list[str] = []
        self.checks_sent = self.finished = self.resent = self.fragment_runs = 0
        self.kill_after: int | None = None
        self.kill = None
        self.killed: dict | None = None
        self.teacher_last: tuple | None = None

    # -- a student -----------------------------------------------------------------------------------------------
    async def _reconnect(self, tab: Tab, why: str, deadline: float) -> None:
        self.drops.append(why)
        start = time.perf_counter()
        for _ in range(RECONNECT_TRIES):
            if time.monotonic() > deadline:
                break
            try:
                await tab.connect()
            except (Dropped, TimeoutError):
                await asyncio.sleep(RECONNECT_WAIT_S)
                continue
            self.reconnect_ms.append((time.perf_counter() - start) * 1e3)
            return
        raise Dropped(f"gave up reconnecting after {why}")

    async def _send_check(self, tab: Tab, seat: str, ex: str, typed: dict[str, str], deadline: float) -> None:
        """Open the exercise, fill its boxes, send the check; after a drop, reconnect and send it again."""
        verdicts = _verdicts(ex, typed)
        new = sum(self.tally.changes.get((seat, ex, box), [None])[-1] != value for box, value in typed.items())
        self.tally.sent(seat, ex, typed, verdicts)  # intended before sent: a lost reply must still count
        first = time.perf_counter()
        for attempt in range(RECONNECT_TRIES):
            try:
                tab.choose("exercise", EXERCISES.index(ex))
                await tab.rerun()
                for box, value in typed.items():
                    tab.set(f"box_{ex}_{box}", "string", value)
                self.checks_sent += 1
                if self.kill_after is not None and self.checks_sent >= self.kill_after and self.killed is None:
                    self.killed = self.kill()
                shown = await tab.rerun(triggers=(f"check_{ex}",))
            except (Dropped, TimeoutError) as err:
                self.resent += 1
                await self._reconnect(tab, f"{type(err).__name__}: {err}", deadline)
                continue
            except KeyError as err:  # a widget the page did not draw
                self.errors.append(f"{ex}: no widget {err} on the page")
                return
            self.round_trips.append(shown.ms)
            self.sent_at.append(time.monotonic() - self.start - shown.ms / 1e3)
            # sent again: the first send may have recorded some boxes (all, none, or the first few before its process
            # died), so the note says 0 to all of them new; the database's rows are what must add up
            self._judge(ex, typed, verdicts, shown, (new,) if attempt == 0 else tuple(range(new + 1)))
            if attempt:  # a check that met a drop: from its first send to its verdicts, the reconnect included
                self.recovered_ms.append((time.perf_counter() - first) * 1e3)
            return
        raise Dropped(f"{ex}: the check never got a reply")

    def _judge(self, ex: str, typed: dict[str, str], verdicts: dict[str, bool], shown, new: tuple[int, ...]) -> None:
        """The page's verdicts (one alert per box) and its note of new rows (one of ``new``)."""
        self.errors.extend(shown.exceptions)
        got = Counter(fmt for fmt, _ in shown.alerts if fmt in (SUCCESS, ERROR))
        want = Counter(SUCCESS if ok else ERROR for ok in verdicts.values())
        if got != want:
            self.wrong_page.append(f"{ex} {typed}: alerts {dict(got)}, expected {dict(want)}")
        notes = [m for text in shown.texts if (m := RECORDED.match(text))]
        if len(notes) != 1 or int(notes[0][1]) not in new or int(notes[0][2]) != len(typed):
            self.wrong_page.append(f"{ex}: the 'Recorded' note {[n[0] for n in notes]} (expected {new} new)")

    async def _student(self, i: int, deadline: float) -> None:
        ws_url, http_base = self.targets[i % len(self.targets)]
        tab = Tab(ws_url, http_base, urllib.parse.urlencode({"class": self.room.join_code}))
        try:
            await tab.connect()
            tab.set("class_nickname", "string", nickname(i))
            shown = await tab.rerun(triggers=("class_join_submit",))
            self.join_ms.append(shown.ms)
            self.errors.extend(shown.exceptions)
            seat = urllib.parse.parse_qs(tab.query).get("seat", [""])[0]
            if not seat:
                raise Dropped(f"student {i} did not get a seat (query {tab.query!r})")
            self.seats.append(seat)
            for ex, typed in plan(self.seed, i)[:MAX_STEPS]:
                if time.monotonic() > deadline:
                    return
                try:
                    for out in await tab.idle(random.uniform(*self.think)):  # the class bar's timer runs meanwhile
                        self.errors.extend(out.exceptions)
                        self.fragment_runs += 1
                except (Dropped, TimeoutError) as err:
                    await self._reconnect(tab, f"{type(err).__name__}: {err}", deadline)
                await self._send_check(tab, seat, ex, typed, deadline)
            self.finished += 1
        except (Dropped, TimeoutError, KeyError) as err:
            self.errors.append(f"student {i}: {type(err).__name__}: {err}")
        finally:
            await tab.close()

    # -- the teacher ---------------------------------------------------------------------------------------------
    async def _teacher(self, done: asyncio.Event, deadline: float) -> None:
        ws_url, http_base = self.targets[0]
        tab = Tab(ws_url, http_base, urllib.parse.urlencode({"teach": self.room.class_id}))
        try:
            await tab.connect()
            tab.set("class_teacher_key", "string", self.room.teacher_key)
            self._read_table(await tab.rerun(triggers=("class_teacher_open",)))
            for _ in range(100_000):  # bounded; ends once the students are done (one last look) or at the deadline
                try:
                    if done.is_set() or time.monotonic() > deadline:
                        self._read_table(await tab.rerun())  # the last look: the whole page once more
                        break
                    for shown in await tab.idle(TEACHER_LOOK_S, until=done):  # the live view's own timer
                        self.teacher_ms.append(shown.ms)
                        self._read_table(shown)
                except (Dropped, TimeoutError):
                    await self._reconnect(tab, "the teacher's tab dropped", deadline)
                    tab.set("class_teacher_key", "string", self.room.teacher_key)
                    self._read_table(await tab.rerun(triggers=("class_teacher_open",)))
        except (Dropped, TimeoutError, KeyError) as err:
            self.errors.append(f"teacher: {type(err).__name__}: {err}")
        finally:
            await tab.close()

    def _read_table(self, shown) -> None:
        self.errors.extend(f"teacher: {e}" for e in shown.exceptions)
        tables = [t for t in shown.tables if set(TEACHER_COLUMNS) <= set(t)]
        if len(tables) != 1 or "Students" not in shown.metrics:
            self.errors.append(f"teacher: {len(tables)} progress tables, metrics {sorted(shown.metrics)}")
            self.teacher_last = None
            return
        table = tables[0]
        rows = [tuple(int(table[c][r]) for c in TEACHER_COLUMNS[1:]) for r in range(len(table["Exercise"]))]
        self.teacher_last = (int(shown.metrics["Students"].replace(",", "")), rows)

    # -- the run -------------------------------------------------------------------------------------------------
    async def _run(self, seconds: float, warm: int) -> float:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=self.students + 8))
        for i in range(warm):  # a first page load per process: its imports are not counted
            tab = Tab(*self.targets[i % len(self.targets)], "")
            with contextlib.suppress(TimeoutError, Dropped):
                await tab.connect()
            await tab.close()
        start = time.monotonic()
        deadline = start + seconds
        done = asyncio.Event()
        teacher = asyncio.create_task(self._teacher(done, deadline + 60))
        tasks = []
        self.start = start
        for i in range(self.students):  # students join over join_over_s (the link on the projector), in order
            await asyncio.sleep(max(0.0, start + self.join_over_s * i / self.students - time.monotonic()))
            tasks.append(asyncio.create_task(self._student(i, deadline)))
        await asyncio.gather(*tasks)
        wall = time.monotonic() - start
        done.set()
        await teacher
        return wall

    def _windows(self, width: float) -> list[dict]:
        """The round trips of the checks sent in each ``width`` seconds of the run: when the load was highest."""
        out = []
        for w in range(int(max(self.sent_at, default=0) // width) + 1):
            inside = [ms for at, ms in zip(self.sent_at, self.round_trips, strict=True) if w <= at / width < w + 1]
            out.append({"from_s": w * width, "checks": len(inside), **_quantiles(inside)})
        return out

    def go(self, seconds: float, warm: int = 1) -> dict:
        random.seed(self.seed)
        cpu, busy = time.process_time(), machine_busy_s()
        wall = asyncio.run(self._run(seconds, warm))
        # the whole machine's busy cores meanwhile: the servers, the bench, HAProxy, the database, and whatever else
        # the shared machine ran (the warm-up page loads too)
        busy = (machine_busy_s() - busy) / wall
        figures = self._figures(wall)
        figures["client_cpu_share_of_one_core"] = (time.process_time() - cpu) / wall
        figures["machine_busy_cores"] = busy
        return figures

    def _figures(self, wall: float) -> dict:
        with self.store._sessions() as session:  # the rows themselves, not the store's own counting
            rows = session.execute(
                select(Answer.student_id, Answer.exercise_id, Answer.box, Answer.value_text).where(
                    Answer.class_id == self.room.class_id
                )
            ).all()
        recorded = Counter(tuple(r) for r in rows)
        intended = Counter((*k, v) for k, values in self.tally.changes.items() for v in values)
        exercises = {ex: [b.name for b in BOXES[ex]] for ex in EXERCISES}
        progress = self.store.progress(self.room.class_id, self.room.teacher_key, exercises)
        from_store = (progress.students, [(e.not_started, e.answered, e.correct) for e in progress.exercises])
        from_bench = (len(self.seats), expected_counts(self.tally, self.seats))
        teacher = self.teacher_last
        return {
            "students": self.students,
            "students_joined": len(self.seats),
            "students_finished": self.finished,
            "wall_s": wall,
            "checks_sent": self.checks_sent,
            "checks_resent": self.resent,
            "round_trip_ms": _quantiles(self.round_trips),
            "round_trip_ms_by_30s": self._windows(30.0),
            "join_ms": _quantiles(self.join_ms),
            "answers_intended": sum(intended.values()),
            "answers_recorded": sum(recorded.values()),
            "lost": sum((intended - recorded).values()),
            "duplicates": sum((recorded - intended).values()),
            "teacher_table": teacher and [teacher[0], teacher[1]],
            "bench_tally": [from_bench[0], from_bench[1]],
            "store_progress": [from_store[0], from_store[1]],
            "teacher_equal": teacher is not None and teacher == from_bench == from_store,
            "teacher_rerun_ms": _quantiles(self.teacher_ms),
            "teacher_looks": len(self.teacher_ms),
            "student_fragment_runs": self.fragment_runs,
            "reconnects": len(self.reconnect_ms),
            "reconnect_ms": _quantiles(self.reconnect_ms),
            "check_across_drop_ms": _quantiles(self.recovered_ms),
            "drops": Counter(self.drops).most_common(10),
            "killed": self.killed,
            "errors": self.errors,
            "wrong_page": self.wrong_page,
        }
