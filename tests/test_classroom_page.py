"""AppTest of the Workshop's class (issue 32): the student's path (join with the link, answer, reload, follow the
teacher) and the teacher's (start, key shown once, open again with the key, live counts, steer, projector mode,
delete), in English and Chinese, on a real SQLite file per test. The counts the teacher's page shows are compared
with what the students sent and with the database."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.classroom.store import open_store
from core.messages import message
from core.teaching.answer_boxes import box, boxes
from core.teaching.exercises import load_exercises
from tests.app_helpers import open_app

PAGE = "pages/workshop_page.py"
EXERCISES = load_exercises()
BOXES = {ex.id: [b.name for b in boxes(ex.id)] for ex in EXERCISES}


@pytest.fixture
def db_path(tmp_path, monkeypatch):
    path = tmp_path / "class.db"
    monkeypatch.setenv("EXPLORER_CLASS_DB", str(path))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    return path


@pytest.fixture
def store(db_path):
    found = open_store(db_path)
    yield found
    found.close()


def workshop(**query) -> AppTest:
    at = open_app(**query)
    at.switch_page(PAGE).run()
    assert not at.exception
    return at


def texts(at: AppTest) -> list[str]:
    """Every text the page shows, for checks that something is (or is never) on it."""
    kinds = ("markdown", "caption", "code", "error", "warning", "info", "success", "title", "header", "subheader")
    return [str(e.value) for kind in kinds for e in getattr(at, kind)]


def joined_student(code: str, nickname: str, lang: str = "en") -> AppTest:
    at = workshop(**{"class": code, "lang": lang})
    at.text_input(key="class_nickname").input(nickname)
    at.button(key="class_join_submit").click().run()
    assert not at.exception
    return at


def answer(at: AppTest, exercise_id: str, **typed: str) -> AppTest:
    for name, value in typed.items():
        at.text_input(key=f"box_{exercise_id}_{name}").input(value)
    at.button(key=f"check_{exercise_id}").click().run()
    assert not at.exception
    return at


def right(exercise_id: str, name: str) -> str:
    return box(exercise_id, name).shown


def teacher_view(class_id: str, key: str, **query) -> AppTest:
    at = workshop(teach=class_id, **query)
    at.text_input(key="class_teacher_key").input(key)
    at.button(key="class_teacher_open").click().run()
    assert not at.exception
    return at


def counts(at: AppTest) -> dict[str, tuple[int, int, int]]:
    frame = at.dataframe[0].value
    return {row.iloc[0].split(".")[0]: tuple(int(v) for v in row.iloc[1:4]) for _, row in frame.iterrows()}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_student_alone_gets_checks_recorded_nowhere(db_path, lang):
    at = workshop(lang=lang)
    gib = box("kv_gqa", "kv_per_request")
    answer(at, "kv_gqa", kv_per_token=right("kv_gqa", "kv_per_token"), kv_per_request=f"{gib.expected / 1e9:.4f} GiB")
    assert len(at.success) == 1 and len(at.error) == 1
    assert message("answer_check.slip_gb_gib", lang) in at.error[0].value  # the slip named
    assert message("classroom.not_recorded", lang) in texts(at)
    assert not db_path.exists()  # nobody joined a class: the database was never opened
    assert at.expander  # the answer stays one click away outside a class


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_class_from_start_to_the_teachers_counts(store, db_path, lang):
    teacher = workshop(lang=lang)
    teacher.button(key="class_start_submit").click().run()
    assert not teacher.exception
    class_id = teacher.query_params["teach"]
    key = teacher.code[0].value
    assert message("classroom.key_once", lang) in texts(teacher)
    link = next(c.value for c in teacher.code if "class=" in c.value)
    code = link.split("class=")[1].split("&")[0]
    assert f"lang={lang}" in link
    # two students: one right on exercise 1, one wrong then right, then wrong on exercise 2
    ada = joined_student(code, "Ada", lang)
    assert ada.query_params["seat"]
    answer(ada, "kv_gqa", **{n: right("kv_gqa", n) for n in BOXES["kv_gqa"]})
    assert len(ada.success) == 3
    assert message("classroom.recorded", lang, new=3, sent=3) in texts(ada)
    bob = joined_student(code, "**Bob** <b>x</b> [l](http://e.vil)", lang)
    assert any("\\*\\*Bob\\*\\*" in s for s in texts(bob))  # the nickname shown literally
    answer(bob, "kv_gqa", kv_per_token="65536")
    answer(bob, "kv_gqa", **{n: right("kv_gqa", n) for n in BOXES["kv_gqa"]})
    answer(bob, "kv_gqa", **{n: right("kv_gqa", n) for n in BOXES["kv_gqa"]})  # the same again: recorded once
    assert message("classroom.recorded", lang, new=0, sent=3) in texts(bob)
    bob.radio(key="exercise").set_value("2").run()
    answer(bob, "ceiling", paged="1")
    teacher.button(key="class_key_saved").click().run()
    assert key not in [c.value for c in teacher.code]  # shown once
    view = counts(teacher)
    assert view["1"] == (0, 0, 2) and view["2"] == (1, 1, 0) and view["3"] == (2, 0, 0)
    assert next(m.value for m in teacher.metric) == "2"
    wrong = teacher.dataframe[1].value
    assert "65536" in wrong.iloc[:, 2].tolist()
    progress = store.progress(class_id, key, BOXES)
    assert [(c.not_started, c.answered, c.correct) for c in progress.exercises] == [view[str(n)] for n in range(1, 8)]
    rows = store.export_csv(class_id, key).strip().splitlines()
    assert len(rows) == 1 + 3 + 1 + 3 + 1  # header, Ada's 3, Bob's wrong, his 3 right (the resend not), exercise 2
    assert str(db_path) not in "".join(texts(teacher) + texts(ada) + texts(bob))


def test_the_seat_in_the_link_finds_the_student_again_with_their_answers(store):
    made = store.create_class("en", 7)
    ada = joined_student(made.join_code, "Ada")
    seat = ada.query_params["seat"]
    answer(ada, "kv_gqa", kv_per_token="131072 bytes")
    again = workshop(**{"class": made.join_code, "seat": seat})  # a reload, or another process after a failover
    assert all(w.key != "class_nickname" for w in again.text_input)
    assert again.text_input(key="box_kv_gqa_kv_per_token").value == "131072 bytes"
    answer(again, "kv_gqa", kv_per_token="131072 bytes")  # resent after the reload: recorded once
    assert len(store.export_csv(made.class_id, made.teacher_key).strip().splitlines()) == 2
    stranger = workshop(**{"class": made.join_code, "seat": "not-a-seat"})
    assert message("classroom.seat_gone", "en") in texts(stranger)
    assert stranger.text_input(key="class_nickname")


def test_students_follow_the_teachers_moves_reveal_and_timer(store):
    made = store.create_class("en", 7)
    ada = joined_student(made.join_code, "Ada")
    assert message("classroom.answer_waits", "en") in texts(ada)  # hidden until revealed
    teacher = teacher_view(made.class_id, made.teacher_key)
    teacher.selectbox(key="class_steer_exercise").set_value(
        teacher.selectbox(key="class_steer_exercise").options[2]
    ).run()
    teacher.button(key="class_move").click().run()
    teacher.button(key="class_reveal").click().run()
    teacher.button(key="class_timer_start").click().run()
    assert not teacher.exception
    ada.run()
    assert ada.radio(key="exercise").value == "3"
    assert message("classroom.answer_revealed", "en") in texts(ada)
    assert any("min" in i.value and "left" in i.value for i in ada.info)
    ada.radio(key="exercise").set_value("1").run()  # the student may browse on until the teacher moves again
    ada.run()
    assert ada.radio(key="exercise").value == "1"


def test_a_wrong_key_opens_nothing_and_tries_are_limited(store):
    made = store.create_class("en", 7)
    other = store.create_class("en", 7)
    at = teacher_view(made.class_id, other.teacher_key)  # another class's key
    assert message("classroom.wrong_key", "en") in texts(at)
    assert not at.dataframe
    for _ in range(4):
        at.text_input(key="class_teacher_key").input("guess")
        at.button(key="class_teacher_open").click().run()
    at.text_input(key="class_teacher_key").input(made.teacher_key)
    at.button(key="class_teacher_open").click().run()
    assert any("wait" in w.value for w in at.warning)  # the sixth try within five minutes is refused
    assert not at.dataframe


def test_joining_is_rate_limited_and_nicknames_are_unique(store):
    made = store.create_class("en", 7)
    joined_student(made.join_code, "Ada")
    at = workshop(**{"class": made.join_code})
    for _ in range(5):
        at.text_input(key="class_nickname").input("Ada")
        at.button(key="class_join_submit").click().run()
    assert message("classroom.nickname_taken", "en") in texts(at)
    at.text_input(key="class_nickname").input("Eve")
    at.button(key="class_join_submit").click().run()
    assert any("wait" in w.value for w in at.warning)
    assert "seat" not in at.query_params


def test_projector_mode_and_deleting_the_class(store):
    made = store.create_class("zh", 7)
    ada = joined_student(made.join_code, "Ada", "zh")
    teacher = teacher_view(made.class_id, made.teacher_key, lang="zh")
    teacher.button(key="class_projector").click().run()
    assert teacher.query_params["projector"] == "1"
    assert not teacher.title  # large type, only the class: no page title, no exercises
    assert not [r for r in teacher.radio if r.key == "exercise"]
    assert next(m.label for m in teacher.metric) == message("classroom.students", "zh")
    teacher.button(key="class_projector_off").click().run()
    teacher.button(key="class_delete").click().run()
    assert not teacher.exception and "teach" not in teacher.query_params
    ada.run()
    assert message("classroom.no_class", "zh") in texts(ada)


def test_a_database_that_cannot_open_is_said_without_its_path(tmp_path, monkeypatch):
    blocked = tmp_path / "no-such-dir" / "class.db"
    monkeypatch.setenv("EXPLORER_CLASS_DB", str(blocked))
    at = workshop(**{"class": "whatever"})
    assert message("classroom.db_unavailable", "en") in texts(at)
    assert str(tmp_path) not in "".join(texts(at))
    assert at.radio(key="exercise")  # the workshop itself still works
