"""Real browser (issue 32): a teacher starts a class in English and a student joins it in Chinese through the link,
answers, and is recorded; the teacher's live view counts them without a click, the student follows the teacher's
move, a reload keeps the student's seat and answers, and projector mode hides the sidebar.

Uses tests/test_browser.py's server and browser (skips without Chromium outside CI, fails without it in CI); the
server's class database is the test run's file (tests/conftest.py sets ``EXPLORER_CLASS_DB``).
"""

from __future__ import annotations

import os
import re

from core.classroom.store import open_store
from core.messages import message
from core.teaching.answer_boxes import box, boxes
from core.teaching.exercises import load_exercises
from tests.test_browser import browser, open_page, server, settled  # noqa: F401 (fixtures)

POLL_MS = 20_000  # the student's bar asks every 10 s, the teacher's view every 3 s
BOXES = {ex.id: [b.name for b in boxes(ex.id)] for ex in load_exercises()}


def start_class(page) -> tuple[str, str, str]:
    """On the Workshop: start a class; (the teacher key, the join link, the class id)."""
    from playwright.sync_api import expect

    page.get_by_text(message("classroom.start_heading")).click()
    page.get_by_role("button", name=message("classroom.start")).click()
    expect(page.get_by_text(message("classroom.key_once"))).to_be_visible()
    settled(page)
    codes = page.get_by_test_id("stCode").all_inner_texts()
    key = codes[0].strip()
    link = next(c.strip() for c in codes if "class=" in c)
    class_id = re.search(r"teach=([\w-]+)", page.url).group(1)
    return key, link, class_id


def test_a_class_in_two_languages_live(open_page):  # noqa: F811 (the fixtures imported above)
    from playwright.sync_api import expect

    teacher = open_page("workshop")
    settled(teacher)
    key, link, class_id = start_class(teacher)
    assert link.endswith("lang=en") and "/workshop?class=" in link
    expect(
        teacher.locator("[data-testid='stImage'] img[src^='data:image/svg+xml']")
    ).to_be_visible()  # the QR code, drawn here
    teacher.get_by_role("button", name=message("classroom.key_saved")).click()
    expect(teacher.get_by_text(message("classroom.key_once"))).to_have_count(0)
    assert key not in teacher.content()  # shown once

    student = open_page(link.split("/", 3)[3].replace("lang=en", "lang=zh"))
    nickname = "学生 <b>一</b> **粗**"
    student.get_by_role("textbox", name=message("classroom.nickname", "zh")).fill(nickname)
    student.get_by_role("button", name=message("classroom.join", "zh")).click()
    expect(student.get_by_text(nickname)).to_be_visible()  # shown literally: no bold, no HTML
    assert "seat=" in student.url
    student.get_by_role("textbox", name=message("answer_check.box_kv_gqa_kv_per_token", "zh")).fill(
        box("kv_gqa", "kv_per_token").shown
    )
    student.get_by_role("button", name=message("classroom.check", "zh")).click()
    expect(student.get_by_text(message("classroom.recorded", "zh", new=1, sent=1))).to_be_visible()

    students = teacher.get_by_test_id("stMetric").filter(has_text=message("classroom.students"))
    expect(students.get_by_test_id("stMetricValue")).to_have_text("1", timeout=POLL_MS)  # live, no click
    db = open_store(os.environ["EXPLORER_CLASS_DB"])
    try:
        first = db.progress(class_id, key, BOXES).exercises[0]
        assert (first.not_started, first.answered, first.correct) == (0, 1, 0)  # one box of three so far
    finally:
        db.close()

    steer = teacher.get_by_role("combobox", name=message("classroom.steer_exercise"), exact=True)
    steer.click()
    steer.press_sequentially("3. ")
    steer.press("Enter")
    expect(steer).to_have_value(re.compile(r"^3\. "))
    settled(teacher)
    teacher.get_by_role("button", name=message("classroom.move")).click()
    expect(teacher.get_by_text(message("classroom.moved", number=3))).to_be_visible()
    expect(student.get_by_role("heading", name=re.compile(r"^练习 3"))).to_be_visible(timeout=POLL_MS)

    student.reload()  # the seat is in the link: no new join, the answer still there
    settled(student)
    expect(student.get_by_text(nickname)).to_be_visible()
    expect(student.get_by_role("textbox", name=message("classroom.nickname", "zh"))).to_have_count(0)

    teacher.get_by_role("button", name=message("classroom.projector_on")).click()
    expect(teacher.get_by_role("button", name=message("classroom.projector_off"))).to_be_visible()
    expect(teacher.get_by_test_id("stSidebar")).to_be_hidden()
    expect(students.get_by_test_id("stMetricValue")).to_have_text("1")
