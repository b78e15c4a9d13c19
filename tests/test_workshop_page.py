"""AppTest of the Workshop page: both languages, each exercise's button loads its scenario into the
sidebar (and the Explorer then shows core's estimate for it), each revealed answer is core's, the
handout downloads hold every question, and ``?exercise=N`` opens that exercise."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.estimate.result import estimate
from core.messages import message
from core.serving.load_sweep import summarize
from core.serving.simulate import simulate
from core.serving.traffic import Traffic
from core.teaching.answers import answer
from core.teaching.answers_serving import traffic_lengths
from core.teaching.exercises import AUTO, exercise, load_exercises
from core.teaching.handout import exercise_link, markdown_steps
from tests.app_helpers import metrics, open_app
from ui import fmt

PAGE = "pages/workshop_page.py"
EXERCISES = load_exercises()
WIDGETS = ("selectbox", "number_input", "select_slider", "slider", "segmented_control", "radio", "text_input")


def widget_value(at: AppTest, key: str):
    """The value the sidebar's input ``key`` shows, whatever kind of input it is."""
    for kind in WIDGETS:
        try:
            return getattr(at, kind)(key=key).value
        except KeyError:
            continue
    raise KeyError(key)


def workshop(**query) -> AppTest:
    at = open_app(**query)
    at.switch_page(PAGE).run()
    assert not at.exception
    return at


def choose(at: AppTest, number: int) -> None:
    at.radio(key="exercise").set_value(str(number)).run()
    assert not at.exception


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_runs_in_both_languages(lang):
    at = workshop(lang=lang)
    assert at.title[0].value == message("workshop.title", lang)
    assert at.header[0].value == message(
        "workshop.exercise_heading", lang, number=1, title=message(EXERCISES[0].title, lang)
    )
    assert any(message(EXERCISES[0].question, lang) == m.value for m in at.markdown)
    assert at.radio(key="exercise").options[6].startswith("7. ")


@pytest.mark.parametrize("ex", EXERCISES, ids=[ex.id for ex in EXERCISES])
def test_the_load_button_puts_the_scenario_in_the_sidebar_and_the_explorer_shows_cores_estimate(ex):
    # a session that changed the engine and turned a lever on first: loading puts them back to defaults
    at = workshop(util="0.8", max_seqs="64", attn="eager", model="qwen3-8b", tp="2")
    choose(at, ex.number)
    at.button(key=f"workshop_load_{ex.id}").click().run()
    assert not at.exception
    assert at.success[0].value == message("workshop.loaded")
    s = ex.scenario
    expected = {
        "model": s.model,
        "gpu": s.gpu,
        "tp": s.tp,
        "weights": s.weights,
        "kv": s.kv,
        "input_len": s.input_len,
        "output_len": s.output_len,
        "batch": s.batch,
        "max_model_len": s.max_model_len or AUTO,
        "max_seqs": AUTO,
        "attn": "flash",
    }
    assert {key: widget_value(at, key) for key in expected} == expected
    at.switch_page("pages/explorer_page.py").run()
    assert not at.exception
    result = estimate(*s.build())
    shown = metrics(at)
    assert shown["Max concurrent requests without preemption"] == fmt.count(result.kv.max_concurrency_at_request_len)
    assert shown["TTFT (median)"] == fmt.duration(result.burst.median_s)  # the burst as V1 admits it
    assert shown["TPOT"] == fmt.duration(result.latency.tpot_s)
    assert shown["Throughput"] == fmt.rate(result.throughput.output_tokens_per_s)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("ex", EXERCISES, ids=[ex.id for ex in EXERCISES])
def test_each_revealed_answer_is_the_one_core_derives(ex, lang):
    at = workshop(**({"lang": lang} if lang != "en" else {}))
    choose(at, ex.number)
    shown_before = [m.value for m in at.markdown]
    at.session_state[f"workshop_reveal_{ex.id}"] = True  # open the expander (built only while open)
    at.run()
    assert not at.exception
    shown = [m.value for m in at.markdown]
    blocks = markdown_steps(answer(ex), lang)
    assert all(block in shown for block in blocks)
    assert not any(block in shown_before for block in blocks)  # not derived while closed


def test_the_pitfalls_load_test_link_reruns_the_simulated_load():
    ex = exercise("pitfall")
    at = workshop()
    choose(at, ex.number)
    at.button(key="workshop_load_pitfall").click().run()
    at.switch_page("pages/loadtest_page.py").run()
    assert not at.exception
    dep, _ = ex.scenario.build()
    run = answer(ex).values["runs"][-1]
    prompts, answers = traffic_lengths(ex)
    result = summarize(
        simulate(dep, Traffic(mode="rate", rate_per_s=run["rate"]), ex.settings["requests"], prompts, answers)
    )
    assert metrics(at)["TTFT P99"] == fmt.duration(result["ttft"]["p99"]) == fmt.duration(run["ttft_p99_s"])


def test_the_exercise_link_opens_that_exercise_with_its_scenario():
    ex = exercise(5)
    at = workshop(**ex.query(), exercise="5")
    assert at.radio(key="exercise").value == "5"
    assert at.header[0].value.startswith("Exercise 5")
    assert widget_value(at, "model") == ex.scenario.model and widget_value(at, "batch") == ex.scenario.batch
    at.context["url"] = "http://localhost:8501/workshop"
    at.run()
    codes = [c.value for c in at.code]
    assert f"http://localhost:8501/workshop?exercise=5&{'&'.join(f'{k}={v}' for k, v in ex.query().items())}" in codes
    assert any(c.startswith("http://localhost:8501/explorer?model=qwen3-32b") for c in codes)
    choose(at, 1)
    assert "exercise" not in at.query_params  # the first exercise is the page's default


def test_an_exercise_number_a_link_cannot_take_is_named():
    at = workshop(exercise="9")
    assert at.radio(key="exercise").value == "1"
    assert any("exercise=9" in w.value for w in at.warning)


@pytest.fixture
def downloads(monkeypatch) -> dict[str, dict]:
    """What each download button was given on its latest run, by key: its data callable and file name."""
    from streamlit.delta_generator import DeltaGenerator

    given, original = {}, DeltaGenerator.download_button

    def record(self, label, payload, *args, **kwargs):
        given[kwargs["key"]] = {"data": payload, "file_name": kwargs["file_name"]}
        return original(self, label, payload, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", record)
    return given


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_handout_downloads_hold_every_question_in_the_sessions_language(downloads, lang):
    at = workshop(**({"lang": lang} if lang != "en" else {}))
    buttons = {b.proto.id.rsplit("-", 1)[-1]: b.proto for b in at.get("download_button")}
    assert buttons["workshop_download_md"].label == message("workshop.download_md", lang)
    assert buttons["workshop_download_html"].deferred_file_id  # built only when clicked
    assert buttons["workshop_download_html"].ignore_rerun  # a click does not rerun the page (ui.download)
    files = {ext: downloads[f"workshop_download_{ext}"]["data"]() for ext in ("md", "html")}
    for ex in EXERCISES:
        assert message(ex.question, lang) in files["md"]
        assert message(ex.title, lang) in files["html"]
    assert message("workshop.your_answer", lang) in files["md"]
    names = {ext: downloads[f"workshop_download_{ext}"]["file_name"] for ext in ("md", "html")}
    at.checkbox(key="workshop_handout_answers").check().run()
    with_answers = downloads["workshop_download_md"]["data"]()
    assert message("workshop.answer_label", lang) in with_answers
    assert markdown_steps(answer(exercise("kv_gqa")), lang)[0] in with_answers
    # D16: both handouts downloaded as llm-workshop-en.html; the answer key now has its own name
    answer_names = {ext: downloads[f"workshop_download_{ext}"]["file_name"] for ext in ("md", "html")}
    assert names == {"md": f"llm-workshop-{lang}.md", "html": f"llm-workshop-{lang}.html"}
    assert answer_names == {"md": f"llm-workshop-answers-{lang}.md", "html": f"llm-workshop-answers-{lang}.html"}
    assert at.get("download_button")[0].proto.label == message("workshop.download_md_answers", lang)


def leave_and_come_back(at: AppTest) -> None:
    """What a student does through the sidebar: another page, then Workshop in the nav, whose link
    carries no query (Streamlit drops the page's ``?exercise=N`` when it switches pages)."""
    at.switch_page("pages/explorer_page.py").run()
    assert not at.exception
    assert "exercise" not in at.session_state  # the chooser's state went with its widget, as in a browser
    for key in list(at.query_params):
        del at.query_params[key]
    at.switch_page(PAGE).run()
    assert not at.exception


def test_the_chosen_exercise_survives_a_visit_to_another_page_and_reveals_its_own_answer():
    # D5: Workshop -> exercise 3 -> Explorer -> Workshop in the nav showed exercise 1 and revealed its answer
    at = workshop()
    choose(at, 3)
    leave_and_come_back(at)
    assert at.radio(key="exercise").value == "3"
    assert at.header[0].value.startswith("Exercise 3")
    assert at.query_params["exercise"] == "3"  # the URL says it again, so a reload keeps it
    at.session_state["workshop_reveal_knee"] = True  # "Reveal the answer"
    at.run()
    shown = [m.value for m in at.markdown]
    assert all(block in shown for block in markdown_steps(answer(exercise("knee"))))
    assert not any(block in shown for block in markdown_steps(answer(exercise("kv_gqa"))))


def test_a_links_exercise_wins_over_the_one_the_session_remembers():
    at = workshop()
    choose(at, 3)
    at.switch_page("pages/explorer_page.py").run()
    at.query_params["exercise"] = "5"  # a link to exercise 5 opened in the same session
    at.switch_page(PAGE).run()
    assert at.radio(key="exercise").value == "5" and at.header[0].value.startswith("Exercise 5")
    choose(at, 1)  # the first exercise is remembered too, not just left out of the URL
    leave_and_come_back(at)
    assert at.radio(key="exercise").value == "1"


def handout_links(downloads: dict, ext: str = "md") -> str:
    return downloads[f"workshop_download_{ext}"]["data"]()


def test_a_room_address_opens_the_page_without_a_warning_and_every_link_uses_it(downloads):
    at = workshop()
    at.context["url"] = "http://192.168.1.20:8501/workshop"
    at.run()
    assert not at.warning  # nothing to ask: students reach this address
    assert "workshop_room_input" not in [box.key for box in at.text_input]
    assert all(c.value.startswith("http://192.168.1.20:8501/") for c in at.code)
    handout = handout_links(downloads)
    assert exercise_link(exercise("knee"), "http://192.168.1.20:8501/", "en") in handout


@pytest.mark.parametrize("url", ["http://127.0.0.1:8611/workshop", "http://localhost:8501/workshop"])
def test_a_loopback_address_is_said_and_the_room_address_typed_is_used_and_kept(downloads, url):
    # D16: opened as localhost, the handout printed http://127.0.0.1:8611/... links no student can open
    loopback = url.removesuffix("workshop")
    at = workshop()
    at.context["url"] = url
    at.run()
    assert at.warning[0].value == message("workshop.room_warning", "en", address=loopback)
    handout = handout_links(downloads)
    assert loopback + "explorer" not in handout and loopback + "workshop" not in handout
    assert message("workshop.handout_loopback", "en", address=loopback) in handout
    assert loopback + "explorer" not in handout_links(downloads, "html")

    at.text_input(key="workshop_room_input").input("not an address:port").run()
    assert not at.exception
    assert at.error[0].value.startswith("“not an address:port” is not an address a browser can open")
    assert at.text_input(key="workshop_room_input").value == "not an address:port"  # what was typed stays
    at.text_input(key="workshop_room_input").input("127.0.0.1:8501").run()
    assert at.error[0].value == message("workshop.room_is_loopback", "en", value="127.0.0.1:8501")

    at.text_input(key="workshop_room_input").input("192.168.1.20:8501").run()
    room = "http://192.168.1.20:8501/"
    assert not at.error
    assert message("workshop.room_used", "en", address=room) in [c.value for c in at.caption]
    assert all(c.value.startswith(room) for c in at.code)
    for ext in ("md", "html"):
        handout = handout_links(downloads, ext)
        assert exercise_link(exercise("pitfall"), room, "en").replace("&", "&amp;" if ext == "html" else "&") in handout
        assert loopback not in handout
    choose(at, 4)
    leave_and_come_back(at)  # the address outlives the page's widgets, like the exercise
    assert at.text_input(key="workshop_room_input").value == "192.168.1.20:8501"
    assert all(c.value.startswith(room) for c in at.code)
    assert at.radio(key="exercise").value == "4"
