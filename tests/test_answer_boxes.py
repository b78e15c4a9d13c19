"""The Workshop's answer boxes (issue 32, item 2): each box's expected value is the one its exercise's
answer prints, the tolerance accepts the page's rounding and no more, each slip is named where it
applies and never elsewhere, and whatever a student types gives a verdict, never an exception."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.messages import LANGUAGES, load_messages
from core.spec import units
from core.teaching.answer_boxes import GB_PER_GIB, all_boxes, box, boxes
from core.teaching.answer_check import UNIT_TEXT, check, slip_of, unit_text
from core.teaching.answer_parse import MAX_CHARS, Unreadable, read
from core.teaching.answers import answer
from core.teaching.exercises import load_exercises
from core.teaching.text import Table

EXERCISES = load_exercises()
BOXES = all_boxes()
BOX_IDS = [f"{b.exercise_id}.{b.name}" for b in BOXES]
SLIPS = ("gb_gib", "kv_once", "per_gpu", "tokens_requests", "ms_s", "mha", "single_request")


def _typed(value_si: float, b) -> str:
    """A value typed in the box's unit, without a unit (as most students type)."""
    return repr(value_si / b.scale)


def _answer_text(ex) -> str:
    parts = []
    for step in answer(ex).steps:
        if isinstance(step, Table):
            heads, rows = step.render("en")
            parts += heads + [cell for row in rows for cell in row]
        else:
            parts.append(step.render("en"))
    return "\n".join(parts)


def test_every_exercise_has_boxes_with_messages_in_both_languages():
    catalog = load_messages()
    for ex in EXERCISES:
        assert boxes(ex.id), ex.id
    for b in BOXES:
        assert set(catalog[b.label]) >= set(LANGUAGES) and set(catalog[b.tolerance.reason]) >= set(LANGUAGES)
        for key in b.slip_keys:
            assert set(catalog[f"answer_check.slip_{key}"]) >= set(LANGUAGES)
    assert len({(b.exercise_id, b.name) for b in BOXES}) == len(BOXES)


@pytest.mark.parametrize("b", BOXES, ids=BOX_IDS)
def test_expected_value_is_what_the_answer_shows_and_typing_it_is_correct(b):
    ex = next(e for e in EXERCISES if e.id == b.exercise_id)
    assert b.shown in _answer_text(ex)  # the very figure the How derivation prints
    for lang in LANGUAGES:
        verdict = check(b.exercise_id, b.name, b.shown, lang)
        assert verdict.correct and verdict.slip is None and verdict.exercise_id == ex.id, (b.shown, verdict)
        verdict = check(b.exercise_id, b.name, _typed(b.expected, b), lang)
        assert verdict.correct, verdict


@pytest.mark.parametrize("b", BOXES, ids=BOX_IDS)
def test_tolerance_edge_is_correct_and_just_outside_is_wrong(b):
    tol = max(b.tolerance.relative * abs(b.expected), b.tolerance.absolute)
    assert tol > 0
    for sign in (1, -1):
        assert check(b.exercise_id, b.name, _typed(b.expected + sign * 0.999 * tol, b)).correct
        outside = check(b.exercise_id, b.name, _typed(b.expected + sign * 1.02 * tol, b))
        assert outside.readable and not outside.correct


@pytest.mark.parametrize("b", BOXES, ids=BOX_IDS)
def test_each_slip_of_a_box_is_named_for_its_value(b):
    for slip in b.slips:
        for lang in LANGUAGES:
            verdict = check(b.exercise_id, b.name, _typed(slip.value, b), lang)
            assert not verdict.correct and verdict.slip == slip.key, (slip, verdict)
            assert verdict.message.count("\n") == 0
    assert slip_of(b, b.expected) is None


def _generic(b) -> dict[str, tuple[float, ...]]:
    """Every common slip's factors, whether or not the box lists it."""
    ex = next(e for e in EXERCISES if e.id == b.exercise_id)
    tokens = ex.scenario.input_len + ex.scenario.output_len
    gpus = max(ex.settings.get("tp", [ex.scenario.tp]))
    return {
        "gb_gib": (GB_PER_GIB, 1 / GB_PER_GIB),
        "kv_once": (0.5, 2.0),
        "per_gpu": tuple({gpus, 1 / gpus, 4, 1 / 4} - {1}),
        "tokens_requests": (tokens, 1 / tokens, ex.scenario.output_len, 1 / ex.scenario.output_len),
        "ms_s": (1000.0, 1e-3),
    }


@pytest.mark.parametrize("b", BOXES, ids=BOX_IDS)
def test_a_slip_is_never_claimed_where_it_does_not_apply(b):
    for key, factors in _generic(b).items():
        for factor in factors:
            verdict = check(b.exercise_id, b.name, _typed(b.expected * factor, b))
            if key not in b.slip_keys:
                assert verdict.slip != key, (key, factor, verdict)
    odd = check(b.exercise_id, b.name, _typed(b.expected * 3.3, b))  # no slip explains x 3.3
    assert not odd.correct and odd.slip is None


def test_which_boxes_take_which_slips():
    keys = {f"{b.exercise_id}.{b.name}": set(b.slip_keys) for b in BOXES}
    assert "gb_gib" in keys["kv_gqa.kv_per_request"] and "gb_gib" not in keys["kv_gqa.max_concurrency"]
    assert "gb_gib" not in keys["knee.knee"] and "gb_gib" not in keys["kv_gqa.kv_per_token"]  # counts, bytes
    assert {"kv_once", "mha"} <= keys["kv_gqa.kv_per_token"]
    assert (
        "per_gpu" in keys["tensor_parallel.weights_per_gpu"] and "per_gpu" in keys["tensor_parallel.throughput_per_gpu"]
    )
    assert not any("per_gpu" in keys[k] for k in keys if not k.startswith("tensor_parallel."))  # one GPU there
    assert "tokens_requests" in keys["ceiling.paged"] and "single_request" in keys["pitfall.static_rate"]
    assert all("ms_s" in keys[k] for k in keys if box(*k.split(".")).unit == "ms")
    # a GB/GiB slip on a count, and a ms/s slip on memory, are not claimed
    assert check("kv_gqa", "max_concurrency", str(round(438 * GB_PER_GIB))).slip is None
    assert check("kv_gqa", "kv_per_request", "125").slip is None


def test_units_typed_are_converted_before_comparing():
    b = box("kv_gqa", "kv_per_request")
    gb = b.expected / units.GB
    assert check("kv_gqa", "kv_per_request", f"{gb:.3f} GB").correct  # GB typed as GB is right
    assert check("kv_gqa", "kv_per_request", f"{gb:.3f}").slip == "gb_gib"  # the GB figure as GiB is the slip
    assert check("kv_gqa", "kv_per_token", "128 KiB").correct
    tpot = box("knee", "tpot_knee").expected
    assert check("knee", "tpot_knee", f"{tpot:.4f} s").correct
    assert check("knee", "tpot_knee", f"{tpot:.4f}").slip == "ms_s"
    wrong_unit = check("knee", "tpot_knee", "20.5 GiB")
    assert not wrong_unit.readable and "ms" in wrong_unit.message
    assert check("ceiling", "vllm", "27.43x").correct and check("ceiling", "vllm", "27.43 倍").correct


@pytest.mark.parametrize(
    ("typed", "value", "dimension"),
    [
        ("12.5 GiB", 12.5 * units.GiB, "bytes"),
        ("12.5GB", 12.5e9, "bytes"),
        ("1.2k", 1200, None),
        ("131,072", 131072, None),
        ("131 072", 131072, None),
        ("1,234,567.5", 1234567.5, None),
        ("1.234,5", 1234.5, None),
        ("12,5", 12.5, None),
        ("0,125", 0.125, None),
        (".5", 0.5, None),
        ("1e3", 1000, None),
        ("-3", -3, None),
        ("4,614 tok/s", 4614, "tokens_per_s"),
        ("1.64 requests/s", 1.64, "requests_per_s"),
        ("20.5 ms", 0.0205, "seconds"),
        ("1.2M tokens", 1.2e6, "tokens"),
        ("１２．５ＧｉＢ", 12.5 * units.GiB, "bytes"),  # full-width input
        ("１３１，０７２", 131072, None),
        ("约 438 条", 438, "requests"),
        ("20 毫秒", 0.020, "seconds"),
        ("3万", 30000, None),
        ("０，１２５ GiB", 0.125 * units.GiB, "bytes"),
        ("438 个请求。", 438, "requests"),  # a sentence's end
        ("0.125 GiB.", 0.125 * units.GiB, "bytes"),
        ("≈0.13GiB", 0.13 * units.GiB, "bytes"),
    ],
)
def test_read_accepts_what_students_type(typed, value, dimension):
    reading = read(typed)
    assert math.isclose(reading.value, value, rel_tol=1e-12) and reading.dimension == dimension


HOSTILE = ["x" * 10_000, "1" * 10_000, "NaN", "nan", "inf", "-inf", "Infinity", "1e309", "-1e309", "--", "", "   ",
           "\n", "1,2,3", "1..2", "12 furlongs", "1e99999", "0x10", "12\n34", "１ｅ３０９", "{box}", "½"]  # fmt: skip


@pytest.mark.parametrize("typed", HOSTILE)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_hostile_input_gives_a_one_line_message(typed, lang):
    b = box("kv_gqa", "kv_per_request")
    verdict = check(b.exercise_id, b.name, typed, lang)
    assert not verdict.readable and not verdict.correct and verdict.slip is None and verdict.value is None
    assert "\n" not in verdict.message and 0 < len(verdict.message) < 300
    assert load_messages()[b.label][lang] in verdict.message  # names the box


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_unit_as_shown_in_either_language_reads_back(lang):
    for b in BOXES:
        assert b.unit in UNIT_TEXT
        reading = read(f"{EXAMPLES_NUMBER} {unit_text(b.unit, lang)}")
        assert reading.dimension == b.dimension and math.isclose(reading.value, 42 * b.scale), (b.unit, lang)
    assert "条" in check("kv_gqa", "max_concurrency", "1", "zh").message
    assert "请写成例如 17 条" in check("kv_gqa", "max_concurrency", "abc", "zh").message
    assert "单位是 条" in check("kv_gqa", "max_concurrency", "12 ms", "zh").message


EXAMPLES_NUMBER = "42"


def _reason(typed: str) -> str:
    with pytest.raises(Unreadable) as caught:
        read(typed)
    return caught.value.key


def test_hostile_reasons_are_specific():
    assert _reason("") == "empty" and _reason("x" * (MAX_CHARS + 1)) == "too_long"
    assert _reason("1e309") == "not_finite" and _reason("１ｅ３０９") == "not_finite"
    assert _reason("NaN") == _reason("inf") == _reason("--") == "not_a_number"
    assert _reason("12 furlongs") == "unknown_unit"


def test_messages_in_each_language():
    en = check("kv_gqa", "kv_per_token", "65536", "en")
    zh = check("kv_gqa", "kv_per_token", "65536", "zh")
    assert en.slip == zh.slip == "kv_once"
    assert "K and V counted once" in en.message and "只算了一份" in zh.message
    assert "tool's answer" in check("kv_gqa", "kv_per_token", "131072").message
    assert "131,072" not in check("kv_gqa", "kv_per_token", "99").message  # a wrong answer is not given away


def test_unknown_box_is_a_one_line_error():
    with pytest.raises(ValueError, match="expected one of kv_per_token"):
        check("kv_gqa", "nope", "1")
    with pytest.raises(ValueError, match="expected one of kv_gqa"):
        check("nope", "kv_per_token", "1")


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(BOXES),
    st.one_of(
        st.text(),
        st.text(alphabet="0123456789.,-+eE kKMGiBms/x０１２３４５６７８９，．万", max_size=30),
        st.from_regex(r"[+-]?[\d.,' ]{0,12}(e[+-]?\d{1,4})?\s?(GiB|GB|ms|s|tok/s|k|x)?", fullmatch=True),
    ),
    st.sampled_from(LANGUAGES),
)
def test_check_never_raises_for_any_text(b, typed, lang):
    verdict = check(b.exercise_id, b.name, typed, lang)
    assert verdict.message and "\n" not in verdict.message
    assert verdict.correct <= verdict.readable and (verdict.slip is None or not verdict.correct)
    if verdict.value is not None:
        assert math.isfinite(verdict.value)


def test_no_example_is_an_answer_or_a_slip():
    """The boxes show EXAMPLES as placeholders: one equal to an answer gives it away, one equal to a slip's value
    teaches the slip (the bytes example was the KV-once value of exercise 1, "42 requests" exercise 4's answer)."""
    from core.teaching.answer_check import EXAMPLES

    for b in all_boxes():
        verdict = check(b.exercise_id, b.name, f"{EXAMPLES[b.unit]} {b.unit}")
        assert verdict.readable and not verdict.correct and verdict.slip is None, (b.exercise_id, b.name)
