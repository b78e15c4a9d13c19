"""core.teaching: the workshop's exercises as data, every answer's numbers core's for the exercise's
scenario, the answers in both languages, the handout, and the links."""

from __future__ import annotations

import dataclasses
import html
import re
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

from core.estimate.advice import fit_suggestions
from core.estimate.result import estimate
from core.estimate.sweep import sweep
from core.messages import LANGUAGES, load_messages, message
from core.serving.load_sweep import keeps_up, predicted_rates, summarize
from core.serving.simulate import simulate
from core.serving.traffic import Lengths, Traffic
from core.spec import units
from core.spec.engine_defaults import sized_max_model_len
from core.spec.precision import KV_PRECISIONS, WEIGHT_PRECISIONS
from core.teaching.answers import DERIVATIONS, answer, page_inputs, page_query
from core.teaching.exercises import AUTO, SCENARIO_KEYS, app_root, exercise, is_loopback, load_exercises, room_root
from core.teaching.handout import exercise_link, file_name, html_handout, markdown_handout, markdown_steps
from core.teaching.text import Table, Text, count, duration, gib, rate
from ui import fmt
from ui.engine_inputs import LENGTHS
from ui.sidebar import BATCH_RANGE, GPU_COUNTS

EXERCISES = load_exercises()
IDS = [ex.id for ex in EXERCISES]
ROOM = "http://192.168.1.20:8501/"
"""An address students in a room can reach (a loopback one prints no links: see below)."""


@pytest.fixture(scope="module")
def answers():
    return {ex.id: answer(ex) for ex in EXERCISES}


def test_seven_exercises_in_the_chapters_order_each_with_messages_and_a_derivation():
    assert IDS == ["kv_gqa", "ceiling", "knee", "quantization", "tensor_parallel", "pitfall", "tuning"]
    assert [ex.number for ex in EXERCISES] == list(range(1, 8))
    assert set(DERIVATIONS) == set(IDS)
    catalog = load_messages()
    for ex in EXERCISES:
        for key in (ex.title, ex.question, ex.hint):
            assert key.startswith("workshop.") and set(catalog[key]) == set(LANGUAGES)
        assert exercise(ex.number) is ex and exercise(ex.id) is ex


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_every_scenario_is_one_the_sidebar_can_hold_and_builds_as_it_does(ex, catalog):
    s = ex.scenario
    assert s.model in {m.id for m in catalog.models} and s.gpu in {g.id for g in catalog.gpus}
    assert s.tp in GPU_COUNTS and BATCH_RANGE[0] <= s.batch <= BATCH_RANGE[1]
    assert s.weights in (AUTO, *WEIGHT_PRECISIONS) and s.kv in (AUTO, *KV_PRECISIONS)
    assert 1 <= s.input_len <= LENGTHS[-1] and 1 <= s.output_len <= LENGTHS[-1]
    dep, work = s.build(catalog)
    assert (work.input_len, work.output_len, work.batch) == (s.input_len, s.output_len, s.batch)
    assert dep.model.id == s.model and dep.gpu.id == s.gpu and dep.parallel.tp == s.tp
    assert dep.max_model_len == (s.max_model_len or sized_max_model_len(work.request_len, dep.model.max_context))
    if s.max_model_len:
        assert s.max_model_len in LENGTHS and s.max_model_len < dep.model.max_context
    assert not dep.levers.active and dep.engine.gpu_memory_utilization is None  # engine defaults, no levers


def test_kv_per_token_and_gqa_reproduce_the_domain_examples(answers, deploy):
    ans = answers["kv_gqa"]
    v = ans.values
    assert (v["layers"], v["kv_heads"], v["heads"], v["head_dim"]) == (32, 8, 32, 128)
    assert v["kv_bytes_per_token"] == 2 * 32 * 8 * 128 * 2  # Llama-3-8B uses GQA: 0.125 GiB per 1,024 tokens
    assert v["kv_bytes_per_request"] == 0.125 * units.GiB
    assert v["mha_bytes_per_request"] == 0.5 * units.GiB  # the chapter's 32-KV-head figure
    assert v["ratio"] == 4
    dep, work = exercise("kv_gqa").scenario.build()
    result = estimate(dep, work)
    assert v["max_concurrency"] == result.kv.max_concurrency_at_request_len
    assert 90 <= v["mha_max_concurrency"] <= 110  # the chapter's "about 100" on an 80 GB card
    shown = " ".join(markdown_steps(ans))
    assert "131,072 bytes" in shown and "0.500 GiB" in shown and fmt.count(v["max_concurrency"]) in shown


def test_the_ceiling_three_ways_is_cores(answers):
    dep, work = exercise("ceiling").scenario.build()
    result = estimate(dep, work)
    v, kv, mem = answers["ceiling"].values, result.kv, result.memory
    assert (v["paged"], v["vllm"], v["contiguous"]) == (
        kv.max_concurrency_at_request_len,
        kv.max_concurrency_at_max_model_len,
        kv.max_concurrency_contiguous,
    )
    assert v["usable"] * v["memory_fraction"] - v["weights"] - v["activations"] - v["overhead"] == pytest.approx(
        mem.kv_budget
    )
    assert v["vllm"] == pytest.approx(kv.capacity_tokens / dep.max_model_len)  # the log line's arithmetic
    assert v["contiguous"] < work.batch <= v["paged"]  # the exercise's point: only paging runs the batch
    shown = " ".join(markdown_steps(answers["ceiling"]))
    assert f"{kv.max_concurrency_at_max_model_len:,.2f}x" in shown and fmt.gib(mem.kv_budget) in shown


def test_the_knee_is_where_the_sweep_turns_compute_bound(answers):
    dep, work = exercise("knee").scenario.build()
    grid = sweep(dep, np.arange(1, 1025), [work.input_len], work.output_len)
    compute = np.flatnonzero(grid.decode_bound[0] == "compute")
    v = answers["knee"].values
    assert compute.size and v["knee"] == int(grid.batches[compute[0]]) <= v["limit"]
    table = next(step for step in answers["knee"].steps if isinstance(step, Table))
    _, rows = table.render()
    for row in rows:
        result = estimate(dep, dataclasses.replace(work, batch=int(row[0])))
        assert row[1:3] == [fmt.duration(result.latency.tpot_s), fmt.rate(result.throughput.output_tokens_per_s)]
        assert row[3] == message(f"bound.{result.bound_decode}")
    assert str(v["knee"]) in [row[0] for row in rows]


def shown_range(value: str) -> tuple[float, float]:
    """The interval a figure as shown stands for ("2.35×", "1,739 ms", "1.89 s", "162"), in
    seconds for durations: the value give or take half its last digit."""
    number, unit = re.fullmatch(r"([\d,]+(?:\.(\d+))?)\s*(×|ms|s)?", value).group(1, 3)
    decimals = len(number.partition(".")[2])
    half = 0.5 * 10.0**-decimals
    scale = {"ms": units.MS, "s": 1.0}.get(unit, 1.0)
    x = float(number.replace(",", ""))
    return (x - half) * scale, (x + half) * scale


def quotient(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    return a[0] / b[1], a[1] / b[0]


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def test_the_knees_ratios_multiply_out_from_the_figures_the_answer_states(answers):
    # D16: "throughput grows 69.0x while TPOT grows only 1.3x" did not multiply out (162 / 1.3 = 125):
    # throughput is batch x output / E2E here, and E2E holds the whole batch's prefill. Every ratio the
    # two paragraphs state must follow, within the rounding shown, from the figures they state.
    dep, work = exercise("knee").scenario.build()
    steps = {step.key: dict(step.params) for step in answers["knee"].steps if isinstance(step, Text)}
    gain, beyond = steps["workshop.knee_gain"], steps["workshop.knee_beyond"]
    knee, first = answers["knee"].values["knee"], int(gain["first"])
    for batch in (first, knee):  # the identity the sentence explains
        result = estimate(dep, dataclasses.replace(work, batch=batch))
        assert result.throughput.output_tokens_per_s == pytest.approx(batch * work.output_len / result.latency.e2e_s)
    r = {name: shown_range(value) for name, value in gain.items() if name not in ("weights",)}
    assert overlap(r["growth"], (knee / first,) * 2)
    assert overlap(r["e2e_ratio"], quotient(r["e2e_last"], r["e2e_one"]))
    assert overlap(r["tput_ratio"], quotient(r["growth"], r["e2e_ratio"]))  # 162 / 2.35 = 69.0
    assert overlap(r["naive_ratio"], quotient(r["growth"], r["tpot_ratio"]))  # 162 / 1.28 = 126.2
    assert r["naive_ratio"][0] > r["tput_ratio"][1]  # the gap the paragraph explains is real
    table = next(step for step in answers["knee"].steps if isinstance(step, Table))
    rows = {int(row[0]): row for row in table.render()[1]}
    assert overlap(r["tpot_ratio"], quotient(shown_range(rows[knee][1]), shown_range(rows[first][1])))
    tokens = [shown_range(rows[b][2].removesuffix(" tok/s")) for b in (knee, first)]
    assert overlap(r["tput_ratio"], quotient(*tokens))
    b = {name: shown_range(value) for name, value in beyond.items() if name not in ("knee", "after")}
    assert overlap(b["tput_growth"], quotient(b["batch_growth"], b["e2e_growth"]))
    for lang in LANGUAGES:  # the text states exactly these figures
        rendered = Text("workshop.knee_gain", tuple(gain.items())).render(lang)
        assert all(value in rendered for value in gain.values())


def test_quantization_rows_are_each_format_pairs_estimate(answers, catalog):
    ex = exercise("quantization")
    variants = answers["quantization"].values["variants"]
    assert len(variants) == len(ex.settings["variants"])
    for row, (weights, kv) in zip(variants, ex.settings["variants"], strict=True):
        variant = dataclasses.replace(ex.scenario, weights=weights, kv=kv)
        result = estimate(*variant.build(catalog))
        assert row["max_concurrency"] == result.kv.max_concurrency_at_request_len
        assert row["tpot_s"] == result.latency.tpot_s and row["weights_bytes"] == result.memory.weights
    base, *_, both = variants
    assert both["max_concurrency"] > base["max_concurrency"] and both["tpot_s"] < base["tpot_s"]


def test_tensor_parallel_splits_weights_and_adds_all_reduces(answers):
    ex = exercise("tensor_parallel")
    dep, work = ex.scenario.build()
    v = answers["tensor_parallel"].values
    for tp in ex.settings["tp"]:
        result = estimate(dep.with_tp(tp), work)
        assert v[tp]["tpot_s"] == result.latency.tpot_s
        assert v[tp]["max_concurrency"] == result.kv.max_concurrency_at_request_len
        assert v[tp]["weights"] == pytest.approx(v[1]["weights"] / tp, rel=0.01)
        assert (v[tp]["allreduce_s"] > 0) == (tp > 1)
    assert v[4]["tpot_s"] > v[1]["tpot_s"] / 4  # communication and fixed costs: less than linear


def test_the_pitfall_simulates_the_avalanche_past_the_ceiling(answers):
    ex = exercise("pitfall")
    dep, work = ex.scenario.build()
    v = answers["pitfall"].values
    static, _ = predicted_rates(dep, work.input_len, work.output_len)
    assert v["static_rate"] == static
    assert v["naive_rate"] == v["ceiling"] / (estimate(dep, work).latency.tpot_s * work.output_len)
    assert v["naive_rate"] > static  # single-request numbers over-promise
    assert v["tail_ceiling"] < v["ceiling"]
    prompts = Lengths(mean=work.input_len, distribution="lognormal", spread=ex.settings["spread"])
    answers_ = Lengths(mean=work.output_len, distribution="lognormal", spread=ex.settings["spread"])
    for run in v["runs"]:
        result = simulate(dep, Traffic(mode="rate", rate_per_s=run["rate"]), ex.settings["requests"], prompts, answers_)
        assert run["ttft_p99_s"] == summarize(result)["ttft"]["p99"] and run["steady"] == keeps_up(result)
    first, last = v["runs"][0], v["runs"][-1]
    assert first["steady"] and not last["steady"]
    assert last["ttft_p50_s"] > 20 * first["ttft_p50_s"]  # an avalanche, not a slope
    inputs = page_inputs(ex)
    assert inputs["lt_rate"] == last["rate"] and inputs["lt_count"] == ex.settings["requests"]


def test_the_tuning_order_lists_the_tools_fixes(answers):
    dep, work = exercise("tuning").scenario.build()
    result = estimate(dep, work)
    v = answers["tuning"].values
    assert v["memory_bound"] and not result.fits
    assert v["fixes"] == [
        (s.notice.code, s.result.kv.max_concurrency_at_request_len, s.result.latency.tpot_s)
        for s in fit_suggestions(dep, work, result)
    ]
    keys = [step.key for step in answers["tuning"].steps if isinstance(step, Text)]
    assert keys[0] == "workshop.tuning_baseline" and keys[-1] == "workshop.tuning_advanced"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_answer_reads_in_both_languages(answers, lang):
    for ans in answers.values():
        blocks = markdown_steps(ans, lang)
        assert blocks and all(block.strip() for block in blocks)
        text = "\n".join(blocks)
        assert not re.search(r"\{[a-z_]+\}", text)  # every placeholder filled
        if lang == "zh":
            assert re.search(r"[\u4e00-\u9fff]", text)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_handout_has_every_question_and_hint_and_the_answers_when_asked(lang):
    questions = [message(ex.question, lang) for ex in EXERCISES]
    for render in (markdown_handout, html_handout):
        bare = render(lang)
        full = render(lang, with_answers=True, root=ROOM)
        for ex in EXERCISES:
            assert message(ex.title, lang) in bare
        if render is markdown_handout:
            assert all(q in bare and q in full for q in questions)
            assert all(message(ex.hint, lang) in bare for ex in EXERCISES)
        assert message("workshop.your_answer", lang) in bare and message("workshop.your_answer", lang) not in full
        assert message("workshop.answer_label", lang) in full and f"{ROOM}explorer?" in full
        assert "http://" not in bare and "https://" not in bare  # no links without the app's address
    answer_text = markdown_steps(answer(exercise("ceiling")), lang)[1]
    assert answer_text in markdown_handout(lang, with_answers=True)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(
    "root",
    [
        "http://localhost:8501/",
        "http://127.0.0.1:8611/",
        "http://127.8.0.1/app/",
        "http://[::1]:8501/",
        "http://0.0.0.0:8501/",
        "http://lab.localhost:8501/",
    ],
)
def test_a_loopback_address_prints_no_links_and_says_why(root, lang):
    # D16: a teacher who opened the app as localhost printed http://127.0.0.1:8611/... links no student can open
    note = message("workshop.handout_loopback", lang, address=root)
    for render in (markdown_handout, html_handout):
        page = render(lang, with_answers=True, root=root)
        assert f"{root}explorer" not in page and f"{root}workshop" not in page and "<a href" not in page
        assert note in page or html.escape(note) in page
        assert message("workshop.link_label", lang) not in page


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_reachable_address_prints_every_exercises_link_and_no_note(lang):
    for render in (markdown_handout, html_handout):
        page = render(lang, root=ROOM)
        for ex in EXERCISES:
            link = exercise_link(ex, ROOM, lang)
            assert link.startswith(f"{ROOM}{ex.page}?") and (link in page or html.escape(link) in page)
        assert message("workshop.handout_loopback", lang, address=ROOM) not in page


@pytest.mark.parametrize(
    ("root", "loopback"),
    [
        ("http://localhost:8501/", True),
        ("http://LOCALHOST./", True),
        ("http://127.0.0.1:8501/", True),
        ("http://127.255.0.9/", True),
        ("http://[::1]:8501/", True),
        ("http://0.0.0.0:8501/", True),
        ("http://x.localhost/", True),
        ("http://192.168.1.20:8501/", False),
        ("http://10.0.0.5/", False),
        ("https://llm.example.org/app/", False),
        ("http://localhost.example.org/", False),
        ("http://[fe80::1]:8501/", False),
        ("", False),
    ],
)
def test_which_addresses_open_only_on_the_computer_that_uses_them(root, loopback):
    assert is_loopback(root) is loopback


@pytest.mark.parametrize(
    ("typed", "root"),
    [
        ("192.168.1.20:8501", "http://192.168.1.20:8501/"),
        ("  http://192.168.1.20:8501/workshop?exercise=3#x ", "http://192.168.1.20:8501/workshop/"),
        ("https://lab.example.org/llm/", "https://lab.example.org/llm/"),
        ("lab.example.org", "http://lab.example.org/"),
        ("http://[fe80::1]:8501", "http://[fe80::1]:8501/"),
    ],
)
def test_a_typed_room_address_becomes_a_root(typed, root):
    assert room_root(typed) == root


@pytest.mark.parametrize(
    "typed", ["", "   ", "http://", "ftp://lab/", "lab:99999", "lab:port", "my lab:8501", "http:///x"]
)
def test_a_room_address_a_browser_cannot_open_is_a_value_error(typed):
    with pytest.raises(ValueError):
        room_root(typed)


def test_the_answer_key_and_the_students_handout_have_different_names_with_the_language():
    names = {
        (ext, lang, answers): file_name(ext, lang, answers)
        for ext in ("md", "html")
        for lang in LANGUAGES
        for answers in (False, True)
    }
    assert len(set(names.values())) == len(names)
    assert names["html", "en", False] == "llm-workshop-en.html"
    assert names["md", "zh", True] == "llm-workshop-answers-zh.md"
    assert all(name.endswith(f"-{lang}.{ext}") for (ext, lang, _), name in names.items())


def test_the_html_handout_is_self_contained_printable_and_escaped():
    page = html_handout("zh", with_answers=True, root="http://localhost:8501/")
    assert page.startswith("<!doctype html>") and "lang='zh-Hans'" in page and "@media print" in page
    for external in ("<script", "<link", "src=", "@import", "url("):
        assert external not in page
    assert "&quot;" in html_handout("en")  # the questions' quotation marks, escaped
    for ex in EXERCISES:
        assert html.escape(message(ex.question, "zh")) in page


def test_links_open_the_answering_page_and_the_exercise_with_the_scenario():
    ex = exercise("ceiling")
    links = ex.links("http://host:8501/", "zh")
    page, workshop = urlsplit(links["page"]), urlsplit(links["workshop"])
    assert page.path == "/explorer" and workshop.path == "/workshop"
    query = {k: v[0] for k, v in parse_qs(page.query).items()}
    assert query == {
        "model": "llama-3.1-8b",
        "gpu": "h100-sxm",
        "input_len": "1024",
        "output_len": "1024",
        "batch": "64",
        "max_model_len": "16384",
        "lang": "zh",
    }
    assert set(query) <= {*SCENARIO_KEYS, "lang"}
    assert parse_qs(workshop.query)["exercise"] == ["2"]
    pitfall = exercise("pitfall")
    load_test = urlsplit(pitfall.links("", "en", page_query(pitfall))["page"])
    assert load_test.path == "load-test" and "lt_rate" in parse_qs(load_test.query)
    assert "lang" not in parse_qs(load_test.query)


@pytest.mark.parametrize(
    ("url", "root"),
    [
        ("http://localhost:8501/workshop", "http://localhost:8501/"),
        ("http://localhost:8501/workshop/", "http://localhost:8501/"),
        ("https://example.org/app/workshop", "https://example.org/app/"),
        ("http://localhost:8501", "http://localhost:8501/"),
        (None, ""),
        ("", ""),
    ],
)
def test_the_apps_address_from_the_workshop_pages(url, root):
    assert app_root(url) == root


@pytest.mark.parametrize("seconds", [0.0123, 0.5, 9.99, 12.3, 1234.5])
def test_answers_format_numbers_as_the_dashboard_does(seconds):
    assert duration(seconds) == fmt.duration(seconds)
    assert rate(seconds * 100) == fmt.rate(seconds * 100)
    assert gib(seconds * units.GiB) == fmt.gib(seconds * units.GiB)
    assert count(seconds * 1000) == fmt.count(seconds * 1000)


def test_an_impossible_scenario_is_a_value_error():
    ex = exercise("kv_gqa")
    broken = dataclasses.replace(ex, scenario=dataclasses.replace(ex.scenario, input_len=8000, output_len=1000))
    with pytest.raises(ValueError):
        broken.scenario.build()
