"""AppTest for the sidebar's Optimizations section and the levers on every page."""

from __future__ import annotations

import pytest

from core.estimate.result import estimate
from core.spec import units
from core.spec.deployment import Workload
from tests.app_helpers import DEFAULT, DEFAULT_WORK, figures, metrics, open_app, shown
from ui import fmt


@pytest.fixture
def app():
    return open_app()


# --- the Optimizations section (what-if levers) ------------------------------------------------


def _with_levers(dep, **levers):
    import dataclasses

    from core.levers.settings import Levers

    return dataclasses.replace(dep, levers=Levers(**levers))


def test_no_lever_is_on_by_default_and_the_panel_says_where_they_are(app):
    assert app.selectbox(key="spec").value == "off"
    assert app.selectbox(key="attn").value == "flash"
    assert any("No optimization is on" in c.value for c in app.caption)


def test_turning_on_speculative_decoding_gives_cores_numbers(app, deploy, catalog):
    from core.levers.settings import Speculative

    app.number_input(key="batch").set_value(1)
    app.selectbox(key="spec").set_value("draft").run()
    assert not app.exception
    assert app.selectbox(key="draft").value == "llama-3.2-1b"  # the smallest model with Llama-3's vocabulary
    app.slider(key="spec_k").set_value(4)
    app.slider(key="spec_acc").set_value(0.7).run()
    spec = Speculative(draft=catalog.model("llama-3.2-1b"), k=4, acceptance=0.7)
    dep = _with_levers(deploy(**DEFAULT), speculative=spec)
    expected = estimate(dep, Workload(input_len=2048, output_len=512, batch=1))
    assert metrics(app)["TPOT"] == fmt.duration(expected.latency.tpot_s)
    table = app.dataframe[0].value
    tpot = table[table[""] == "TPOT"].iloc[0]
    assert tpot["With"] == fmt.duration(expected.latency.tpot_s)
    plain = estimate(deploy(**DEFAULT), Workload(input_len=2048, output_len=512, batch=1))
    assert tpot["Without"] == fmt.duration(plain.latency.tpot_s)
    titles = [f["layout"]["title"]["text"] for f in figures(app)]
    assert "TPOT with and without speculative decoding" in titles
    memory = next(f for f in figures(app) if f["layout"]["title"]["text"] == "Memory per GPU")
    proposer = next(trace for trace in memory["data"] if trace["name"] == "Speculative proposer")
    assert proposer["x"][0] == pytest.approx(expected.memory.part("proposer") / units.GiB)


def test_a_shared_prefix_shortens_ttft_and_raises_concurrency(app, deploy):
    from core.levers.settings import PrefixCaching

    before = metrics(app)
    app.number_input(key="prefix").set_value(1536).run()
    assert not app.exception
    dep = _with_levers(deploy(**DEFAULT), prefix=PrefixCaching(shared_tokens=1536))
    expected = estimate(dep, DEFAULT_WORK)
    shown = metrics(app)
    assert shown["TTFT (median)"] == fmt.duration(expected.burst.median_s)
    assert shown["Max concurrent requests without preemption"] == fmt.count(expected.kv.max_concurrency_at_request_len)
    assert int(shown["Max concurrent requests without preemption"]) > int(
        before["Max concurrent requests without preemption"]
    )


def test_offloading_makes_70b_int4_fit_a_24_gb_card_with_a_warning():
    at = open_app(model="Llama-3.1-70B", gpu="NVIDIA GeForce RTX 4090", weights="int4", max_model_len="4096", batch="1")
    assert metrics(at)["Fits"] == "no"
    text = " ".join(m.value for m in at.markdown)
    assert "offload 19 GiB of weights per GPU to host memory over PCIe 4.0 x16" in text  # offered as the fix
    at.slider(key="offload_w").set_value(22.0).run()
    assert not at.exception
    assert metrics(at)["Fits"] == "yes"
    assert any("does not make it fast" in w.value for w in at.warning)
    assert any("Host memory" in c.value for c in at.caption)


def test_lora_and_eager_attention_controls(app, deploy):
    from core.levers.settings import Lora

    app.number_input(key="lora_n").set_value(4).run()
    assert not app.exception
    app.selectbox(key="lora_t").set_value("attention")
    app.select_slider(key="lora_r").set_value(32).run()
    dep = _with_levers(deploy(**DEFAULT), lora=Lora(adapters=4, rank=32, targets="attention"))
    assert metrics(app)["TPOT"] == fmt.duration(estimate(dep, DEFAULT_WORK).latency.tpot_s)
    text = " ".join(m.value for m in app.markdown)
    assert "**Multi-LoRA**: 52.0 MiB per adapter" in text  # 32 x 32 x (8192 + 5120 + 5120 + 8192) x 2 B
    app.selectbox(key="attn").set_value("eager").run()
    assert not app.exception
    assert any("eager attention materializes" in w.value for w in app.warning)
    titles = [f["layout"]["title"]["text"] for f in figures(app)]
    assert "Attention score memory of one prompt prefilled at once" in titles


def test_levers_come_from_a_shared_link(deploy, catalog):
    from core.levers.settings import PrefixCaching, Speculative

    at = open_app(spec="ngram", spec_k="3", spec_acc="0.5", prefix="1024", batch="2", lang="zh")
    spec = Speculative(method="ngram", k=3, acceptance=0.5)
    dep = _with_levers(deploy(**DEFAULT), speculative=spec, prefix=PrefixCaching(shared_tokens=1024))
    expected = estimate(dep, Workload(input_len=2048, output_len=512, batch=2))
    assert metrics(at)["TPOT"] == fmt.duration(expected.latency.tpot_s)
    assert at.number_input(key="prefix").value == 1024


def test_an_impossible_lever_is_a_message_and_the_inputs_survive():
    at = open_app(model="Mixtral-8x7B-v0.1", gpu="NVIDIA H100 SXM5 80GB", weights="int4", lora_n="2")
    assert not at.exception
    assert any("mixture-of-experts" in shown(e) for e in at.error)
    assert at.number_input(key="lora_n").value == 2
    at.selectbox(key="lora_t").set_value("attention").run()
    assert not at.exception and not at.error


def test_plan_page_offers_prefix_caching_for_a_shared_prompt():
    at = open_app(plan_users="4", plan_think="5.0", plan_prompt="2000", plan_prompt_p95="2000", plan_ttft_ms="300")
    at.switch_page("pages/plan_page.py").run()
    assert not at.exception
    at.number_input(key="plan_shared_prefix").set_value(1500).run()
    assert not at.exception
    fixes = next(d.value for d in at.dataframe if "Fix" in d.value.columns)
    assert fixes.iloc[:, 0].str.contains("prefix caching of the 1500-token shared prefix").any()


def test_load_test_page_runs_with_the_sidebars_levers(deploy):
    from core.levers.settings import PrefixCaching
    from core.serving.load_sweep import summarize
    from core.serving.simulate import simulate
    from core.serving.traffic import Lengths, Traffic

    at = open_app(lt_rate="1.0", lt_count="200", prefix="600")
    at.switch_page("pages/loadtest_page.py").run()
    assert not at.exception
    dep = _with_levers(deploy(gpu="a10", max_model_len=8192), prefix=PrefixCaching(shared_tokens=600))
    expected = summarize(
        simulate(dep, Traffic(mode="rate", rate_per_s=1.0), 200, Lengths(mean=1000), Lengths(mean=200), 0)
    )
    assert metrics(at)["TTFT P99"] == fmt.duration(expected["ttft"]["p99"])
    assert any(i.value == "Optimizations on: prefix cache (sidebar)." for i in at.info)


def test_compare_keeps_scenarios_that_differ_only_in_a_lever(app):
    app.switch_page("pages/compare_page.py").run()
    app.button(key="save_scenario").click().run()
    app.number_input(key="prefix").set_value(1024).run()
    app.button(key="save_scenario").click().run()
    assert not app.exception
    labels = [item["label"] for item in app.session_state["saved"]]
    assert len(labels) == 2 and labels[1].endswith("prefix cache")


CHARTED_PAGES = ["pages/explorer_page.py", "pages/loadtest_page.py", "pages/learn_page.py", "pages/compare_page.py"]


@pytest.mark.parametrize("page", [*CHARTED_PAGES, "pages/validation_page.py", "levers"])
def test_every_figure_passes_plotlys_validation(page):
    """Figures are built without plotly's per-property validation (ui/figure.py): validate them here."""
    import plotly.graph_objects as go

    if page == "levers":
        at = open_app(spec="draft", prefix="1024", attn="eager", lora_n="2", offload_w="1.0")
    else:
        at = open_app()
        at.switch_page(page).run()
    if page.endswith("compare_page.py"):
        at.button(key="save_scenario").click().run()
    if page.endswith("loadtest_page.py"):
        at.button(key="lt_run_sweep").click().run()
    assert not at.exception
    drawn = figures(at)
    if page.endswith("explorer_page.py"):  # one view open at a time: visit each
        for view in ("Concurrency ceiling", "Three-way tradeoff", "Sensitivity"):
            at.session_state["explorer_view"] = view
            at.run()
            assert not at.exception
            drawn += figures(at)[1:]  # the memory chart is first on every view
        assert len(drawn) == 7
    assert drawn
    for spec in drawn:
        go.Figure(spec)  # raises ValueError on any property plotly.js would not understand
        assert isinstance(spec["layout"]["title"], dict) or "title" not in spec["layout"]
