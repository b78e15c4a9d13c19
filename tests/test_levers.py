"""What-if levers: speculative decoding, prefix caching, offloading, multi-LoRA, attention kernels."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.estimate.result import estimate
from core.levers.attention_kernel import eager_oom_prompt_len, eager_profile_bytes, score_matrix_bytes
from core.levers.lora import active_adapters, lora_bytes_per_adapter, lora_params_per_adapter
from core.levers.settings import Levers, Lora, Offload, PrefixCaching, Speculative
from core.levers.speculative import expected_tokens_per_step
from core.memory.kv import kv_bytes_per_sequence
from core.spec import units
from core.spec.deployment import Workload
from core.timing.host_link import host_read_bandwidth
from core.timing.phases import decode_step_time, plain_decode_step_time, prefill_time


def with_levers(dep, **levers):
    return dataclasses.replace(dep, levers=Levers(**levers))


@pytest.fixture
def a10(deploy):
    return deploy(gpu="a10", max_model_len=8192)


@pytest.fixture
def draft(catalog):
    return catalog.model("llama-3.2-1b")


# --- speculative decoding ---------------------------------------------------------------------


def test_expected_tokens_per_step_formula():
    assert expected_tokens_per_step(0.0, 4) == pytest.approx(1.0)
    assert expected_tokens_per_step(1.0, 4) == pytest.approx(5.0)
    # Leviathan et al. eq. 1 at alpha 0.7, k 4: (1 - 0.7^5) / 0.3
    assert expected_tokens_per_step(0.7, 4) == pytest.approx((1 - 0.7**5) / 0.3)
    assert expected_tokens_per_step(0.7, 4) == pytest.approx(2.7731)


def test_acceptance_zero_gives_no_gain_and_a_cost(a10, draft):
    spec = with_levers(a10, speculative=Speculative(draft=draft, k=4, acceptance=0.0))
    plain = decode_step_time(a10, 1, 1152).seconds
    # one token per step, paid for with 4 draft passes and a 5-token verification
    assert decode_step_time(spec, 1, 1152).seconds > plain * 1.1


def test_acceptance_near_one_gives_about_k_plus_1_tokens_at_batch_1(a10, catalog):
    # n-gram lookup costs no GPU time: a perfect proposer makes one step emit k + 1 tokens, and at
    # batch 1 a 5-token verification reads the same weights as a 1-token step
    spec = with_levers(a10, speculative=Speculative(method="ngram", k=4, acceptance=1.0))
    speedup = plain_decode_step_time(a10, 1, 1152).seconds / decode_step_time(spec, 1, 1152).seconds
    assert 4.5 < speedup <= 5.0


def test_gain_falls_monotonically_with_batch_and_turns_into_a_loss(a10, draft):
    spec = with_levers(a10, speculative=Speculative(draft=draft, k=4, acceptance=0.7))
    batches = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024])
    gain = decode_step_time(a10, batches, 1152).seconds / decode_step_time(spec, batches, 1152).seconds
    assert gain[0] > 1.4
    assert np.all(np.diff(gain) <= 1e-9)
    assert gain[-1] < 1.0  # compute-bound: verifying k + 1 tokens per sequence costs more than it saves


def test_draft_adds_its_weights_and_kv(a10, draft):
    spec = with_levers(a10, speculative=Speculative(draft=draft, k=4, acceptance=0.7))
    work = Workload(input_len=1024, output_len=256)
    base, with_draft = estimate(a10, work), estimate(spec, work)
    # Llama-3.2-1B: 1.24e9 parameters in bf16
    assert with_draft.memory.part("proposer") / units.GB == pytest.approx(2.47, rel=0.01)
    assert with_draft.memory.kv_budget == pytest.approx(base.memory.kv_budget - with_draft.memory.part("proposer"))
    draft_kv = kv_bytes_per_sequence(draft, a10.kv, a10.parallel, 1280, 16)
    assert with_draft.kv.bytes_per_request == pytest.approx(base.kv.bytes_per_request + draft_kv)


def test_mtp_head_adds_one_layer(deploy):
    dep = deploy(model="llama-3.1-8b", gpu="h100-sxm")
    mtp = with_levers(dep, speculative=Speculative(method="mtp", k=1, acceptance=0.85))
    mem = estimate(mtp, Workload()).memory
    final_norm = 4096 * 2
    layer = (estimate(dep, Workload()).memory.weights - 2 * 128256 * 4096 * 2 - final_norm) / 32
    assert mem.part("proposer") == pytest.approx(layer + final_norm)  # one decoder layer and its own final norm


def test_draft_must_share_the_vocabulary(a10, catalog):
    with pytest.raises(ValueError, match="vocabulary"):
        with_levers(a10, speculative=Speculative(draft=catalog.model("qwen2.5-0.5b"), k=4, acceptance=0.7))


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"k": 0}, "k"), ({"acceptance": 1.5}, "acceptance"), ({"method": "magic"}, "method")],
)
def test_speculative_settings_are_range_checked(kwargs, field, draft):
    args = {"method": "draft", "draft": draft} | kwargs
    if args["method"] != "draft":
        args.pop("draft")
    with pytest.raises(ValueError, match=field):
        Speculative(**args)


# --- prefix caching ---------------------------------------------------------------------------


def test_full_prefix_hit_leaves_only_the_unshared_prefill(a10):
    shared = with_levers(a10, prefix=PrefixCaching(shared_tokens=1504))
    with_prefix = prefill_time(shared, 1, 2000).seconds
    # the 496 unshared tokens, attending to the 1504 cached ones
    from core.timing.phases import phase_time, prefill_steps

    expected = phase_time(a10, 1, 496, 1504, prefill_steps(a10, 1, 496)).seconds
    assert with_prefix == pytest.approx(expected)
    assert with_prefix < prefill_time(a10, 1, 2000).seconds / 2


def test_prefix_is_cached_in_whole_blocks_and_the_last_token_recomputed(a10):
    shared = with_levers(a10, prefix=PrefixCaching(shared_tokens=1500))  # 93 whole blocks = 1488 tokens
    from core.levers.prefix import cached_prompt_tokens

    assert cached_prompt_tokens(shared.levers.prefix, 2000, 16) == 1488
    assert cached_prompt_tokens(PrefixCaching(shared_tokens=4096), 1024, 16) == 1023
    assert cached_prompt_tokens(PrefixCaching(hit_rate=1.0), 1024, 16) == 1023
    assert cached_prompt_tokens(PrefixCaching(shared_tokens=0, hit_rate=0.5), 1024, 16) == 512


def test_shared_blocks_are_counted_once(a10):
    shared = with_levers(a10, prefix=PrefixCaching(shared_tokens=1504))
    work = Workload(input_len=2000, output_len=300, batch=8)
    per = kv_bytes_per_sequence(a10.model, a10.kv, a10.parallel, 2300, 16)
    prefix = kv_bytes_per_sequence(a10.model, a10.kv, a10.parallel, 1504, 16)
    result = estimate(shared, work)
    assert result.memory.kv_in_use == pytest.approx(prefix + 8 * (per - prefix))
    budget = result.memory.kv_budget
    assert result.kv.max_concurrency_at_request_len == int((budget - prefix) // (per - prefix))
    assert result.kv.max_concurrency_at_request_len > estimate(a10, work).kv.max_concurrency_at_request_len


# --- offloading ---------------------------------------------------------------------------------


def test_zero_offload_changes_nothing(a10):
    work = Workload(input_len=1024, output_len=256, batch=4)
    same = with_levers(a10, offload=Offload(weights_bytes=0.0, kv_bytes=0.0))
    assert estimate(same, work).latency.tpot_s == estimate(a10, work).latency.tpot_s
    assert estimate(same, work).memory.kv_budget == estimate(a10, work).memory.kv_budget


def test_offloading_x_gib_adds_x_gib_over_the_host_link_to_each_decode_step(a10):
    x = 4 * units.GiB
    off = with_levers(a10, offload=Offload(weights_bytes=x))
    added = decode_step_time(off, 4, 1152).seconds - decode_step_time(a10, 4, 1152).seconds
    # A10: PCIe 4.0 x16, 64 GB/s both directions -> 32 GB/s host-to-GPU x link efficiency
    bandwidth = 32 * units.GB * a10.efficiency.link
    assert host_read_bandwidth(a10.gpu, a10.efficiency) == pytest.approx(bandwidth)
    assert added == pytest.approx(x / bandwidth, rel=0.02)  # less the weight reads it no longer does from HBM
    assert estimate(off, Workload()).memory.kv_budget == pytest.approx(estimate(a10, Workload()).memory.kv_budget + x)


def test_offloading_makes_70b_int4_fit_a_24_gb_card(deploy):
    dep = deploy(model="llama-3.1-70b", gpu="rtx-4090", weights="int4", max_model_len=4096)
    work = Workload(input_len=1024, output_len=256)
    assert not estimate(dep, work).fits
    off = with_levers(dep, offload=Offload(weights_bytes=22 * units.GiB))
    result = estimate(off, work)
    assert result.fits and result.engine_starts
    assert result.latency.tpot_s > 0.5  # every token reads 22 GiB over PCIe


def test_spilled_kv_is_read_every_step(a10):
    work = Workload(input_len=1024, output_len=256, batch=40)  # about twice what the A10's budget holds
    plain = estimate(a10, work)
    assert not plain.fits
    spill = with_levers(a10, offload=Offload(kv_bytes=8 * units.GiB))
    result = estimate(spill, work)
    assert result.fits
    assert result.latency.tpot_s > plain.latency.tpot_s + 0.05


def test_offloading_everything_is_refused(a10):
    with pytest.raises(ValueError, match="offloaded weights"):
        with_levers(a10, offload=Offload(weights_bytes=40 * units.GiB))


# --- multi-LoRA ---------------------------------------------------------------------------------


def test_lora_memory_equals_the_hand_derived_figure(catalog):
    model = catalog.model("llama-3.1-8b")
    # rank 16 on q, k, v, o, gate, up, down: 16 x [2 (4096 + 4096) + 2 (4096 + 1024) + 3 (4096 + 14336)]
    # = 1,310,720 per layer, x 32 layers = 41,943,040 parameters (what PEFT prints), 2 bytes each
    lora = Lora(adapters=1, rank=16, targets="all-linear")
    assert lora_params_per_adapter(model, lora) == 41_943_040
    assert lora_bytes_per_adapter(model, lora) == 83_886_080
    attention_only = Lora(adapters=1, rank=16, targets="attention")
    assert lora_params_per_adapter(model, attention_only) == 13_631_488


def test_lora_slots_come_out_of_the_kv_budget_and_add_step_time(a10):
    lora = with_levers(a10, lora=Lora(adapters=8, rank=16))
    work = Workload(input_len=1024, output_len=256, batch=8)
    base, served = estimate(a10, work), estimate(lora, work)
    assert base.memory.kv_budget - served.memory.kv_budget == pytest.approx(8 * 83_886_080)
    assert served.latency.tpot_s > base.latency.tpot_s


def test_active_adapters():
    assert active_adapters(1, 10) == pytest.approx(1.0)
    assert active_adapters(100, 1) == pytest.approx(1.0)
    assert active_adapters(4, 2) == pytest.approx(4 * (1 - 0.75**2))


def test_lora_on_moe_experts_is_refused(deploy):
    dep = deploy(model="mixtral-8x7b", gpu="h100-sxm", weights="int4")
    with pytest.raises(ValueError, match="mixture-of-experts"):
        with_levers(dep, lora=Lora(targets="all-linear"))
    with_levers(dep, lora=Lora(targets="attention"))  # attention-only adapters are fine


# --- attention kernels --------------------------------------------------------------------------


def test_eager_scores_match_the_hand_derived_s_squared_term(catalog):
    model = catalog.model("llama-3.1-8b")
    # 32 heads x 4096^2 pairs x (2 B bf16 scores + 4 B float32 softmax)
    assert score_matrix_bytes(model, 1, 1, 4096) == 32 * 4096**2 * 6
    assert score_matrix_bytes(model, 1, 2, 4096) == 2 * 32 * 4096**2 * 6
    assert score_matrix_bytes(model, 2, 1, 4096) == 16 * 4096**2 * 6
    assert eager_profile_bytes(model, 1, 2048, 8192) == 32 * 2048 * 2048 * 6


def test_eager_attention_shrinks_the_kv_budget_and_runs_out_on_long_prompts(a10):
    eager = with_levers(a10, attention="eager")
    flash_budget = estimate(a10, Workload()).memory.kv_budget
    eager_budget = estimate(eager, Workload()).memory.kv_budget
    assert flash_budget - eager_budget == pytest.approx(32 * 2048 * 2048 * 6)
    longest = eager_oom_prompt_len(a10.model, 1, flash_budget)
    assert score_matrix_bytes(a10.model, 1, 1, longest) <= flash_budget
    assert score_matrix_bytes(a10.model, 1, 1, longest + 1) > flash_budget


# --- invariants ---------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    acceptance=st.floats(0.0, 1.0),
    k=st.integers(1, 16),
    batch=st.integers(1, 512),
)
def test_speculative_time_is_finite_and_positive(a10_dep, draft_model, acceptance, k, batch):
    spec = with_levers(a10_dep, speculative=Speculative(draft=draft_model, k=k, acceptance=acceptance))
    tpot = float(decode_step_time(spec, batch, 1152).seconds)
    assert np.isfinite(tpot) and tpot > 0
    assert 1.0 <= expected_tokens_per_step(acceptance, k) <= k + 1


@pytest.fixture(scope="module")
def a10_dep(catalog):
    from core.spec.deployment import Deployment
    from core.spec.engine import EngineConfig
    from core.spec.precision import kv_precision, weight_precision

    w = weight_precision("bf16")
    return Deployment(
        model=catalog.model("llama-3.1-8b"),
        gpu=catalog.gpu("a10"),
        weights=w,
        kv=kv_precision("auto", w),
        engine=EngineConfig(max_model_len=8192),
    )


@pytest.fixture(scope="module")
def draft_model(catalog):
    return catalog.model("llama-3.2-1b")


@settings(max_examples=60, deadline=None)
@given(
    prefix=st.integers(0, 6000),
    hit_rate=st.floats(0.0, 1.0),
    offload_gib=st.floats(0.0, 12.0),
    kv_gib=st.floats(0.0, 64.0),
    adapters=st.integers(0, 64),
    eager=st.booleans(),
    batch=st.integers(1, 300),
    input_len=st.integers(1, 6000),
)
def test_any_lever_combination_gives_finite_non_negative_figures(
    a10_dep, prefix, hit_rate, offload_gib, kv_gib, adapters, eager, batch, input_len
):
    levers = Levers(
        prefix=PrefixCaching(shared_tokens=prefix, hit_rate=hit_rate),
        offload=Offload(weights_bytes=offload_gib * units.GiB, kv_bytes=kv_gib * units.GiB),
        lora=Lora(adapters=adapters) if adapters else None,
        attention="eager" if eager else "flash",
    )
    dep = dataclasses.replace(a10_dep, levers=levers)
    result = estimate(dep, Workload(input_len=input_len, output_len=128, batch=batch))
    figures = [
        result.latency.ttft_s,
        result.latency.tpot_s,
        result.throughput.output_tokens_per_s,
        result.memory.kv_in_use,
        result.kv.bytes_per_request,
    ]
    assert all(np.isfinite(v) and v > 0 for v in figures)
    assert result.kv.max_concurrency_at_request_len >= 0
    # every lever only adds time per token compared with the same setup without offloading or LoRA,
    # at the same running batch (LoRA slots take KV space, so fewer requests may run at once)
    lighter = dataclasses.replace(dep, levers=dataclasses.replace(levers, offload=Offload(), lora=None))
    lighter = lighter.with_engine(max_num_seqs=result.running_batch)
    assert (
        result.latency.tpot_s
        >= estimate(lighter, Workload(input_len=input_len, output_len=128, batch=batch)).latency.tpot_s
    )
