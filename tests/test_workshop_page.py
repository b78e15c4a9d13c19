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
from core.teaching.handout import markdown_steps
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
    assert shown["Max concurrent requests"] == fmt.count(result.kv.max_concurrency_at_request_len)
    assert shown["TTFT"] == fmt.duration(result.latency.ttft_s)
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


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_handout_downloads_hold_every_question_in_the_sessions_language(monkeypatch, lang):
    from streamlit.delta_generator import DeltaGenerator

    data, original = {}, DeltaGenerator.download_button

    def record(self, label, payload, *args, **kwargs):
        data[kwargs["key"]] = payload
        return original(self, label, payload, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", record)
    at = workshop(**({"lang": lang} if lang != "en" else {}))
    buttons = {b.proto.id.rsplit("-", 1)[-1]: b.proto for b in at.get("download_button")}
    assert buttons["workshop_download_md"].label == message("workshop.download_md", lang)
    assert buttons["workshop_download_html"].deferred_file_id  # built only when clicked
    files = {ext: data[f"workshop_download_{ext}"]() for ext in ("md", "html")}
    for ex in EXERCISES:
        assert message(ex.question, lang) in files["md"]
        assert message(ex.title, lang) in files["html"]
    assert message("workshop.your_answer", lang) in files["md"]
    at.checkbox(key="workshop_handout_answers").check().run()
    with_answers = data["workshop_download_md"]()
    assert message("workshop.answer_label", lang) in with_answers
    assert markdown_steps(answer(exercise("kv_gqa")), lang)[0] in with_answers
