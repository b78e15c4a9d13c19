"""The mechanisms of a step's time and of the API server in front of the engine (issue 30):
kernel classes add up, MoE experts run as their own kernels with a fixed cost per MoE layer, the
measured kernel tables when switched on, and the event loop's serial work per chat request."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from core.serving.arrivals import ingested
from core.serving.simulate import simulate
from core.serving.traffic import Lengths, Traffic
from core.spec import units
from core.spec.efficiency import class_efficiency, resolved
from core.spec.engine import EngineConfig
from core.spec.release import parse_release
from core.timing.kernel_speed import kernel_speed
from core.timing.phases import plain_decode_step_time
from core.timing.work import expert_bytes_read, weight_bytes_read


def test_kv_reads_do_not_hide_under_the_gemms_compute(deploy):
    # Qwen3-14B at 600 sequences of 310 tokens: the GEMMs are compute-bound, attention is a KV read;
    # the kernels run one after another, so the step is the sum of each class's roofline
    dep = deploy(model="qwen3-14b", max_model_len=4096)
    step = plain_decode_step_time(dep, 600, 310)
    assert float(step.kernel_seconds) > float(np.maximum(step.compute_s, step.memory_s)) * 1.1
    gemm = float(step.kernel_seconds) - float(step.attention_s) - float(step.moe_s)
    eff = dep.efficiency
    kv = float(step.kv_bytes) / (dep.gpu.memory_bandwidth * eff.bandwidth)
    assert float(step.attention_s) == pytest.approx(kv)  # attention is its KV read at this context
    assert gemm > kv  # and the GEMMs' compute is the larger class, added to it rather than hiding it


def test_a_dense_model_has_no_moe_time(deploy):
    step = plain_decode_step_time(deploy(), 64, 1000)
    assert float(step.moe_s) == 0.0 and float(step.expert_bytes) == 0.0


def test_moe_experts_are_their_own_kernels_with_a_fixed_cost_per_moe_layer(deploy):
    base = deploy(model="qwen3-30b-a3b", max_model_len=4096).with_efficiency(expert=1.0, moe_layer_overhead_s=0.0)
    eff = base.efficiency
    step = plain_decode_step_time(base, 1, 1000)
    # batch 1: the 8 touched experts of 128 in each layer, read at the dense bandwidth (no multiplier)
    experts = float(expert_bytes_read(base, 1.0))
    assert float(step.expert_bytes) == pytest.approx(experts / base.parallel.tp)
    assert float(step.moe_s) == pytest.approx(experts / (base.gpu.memory_bandwidth * eff.bandwidth))
    # the expert efficiency is the MoE kernels' share of the dense rates
    half = plain_decode_step_time(base.with_efficiency(expert=0.5), 1, 1000)
    assert float(half.moe_s) == pytest.approx(2 * float(step.moe_s))
    # 48 MoE layers x 40 us of routing, sort and combine per step
    fixed = plain_decode_step_time(base.with_efficiency(moe_layer_overhead_s=40 * units.US), 1, 1000)
    assert base.model.num_moe_layers == 48
    assert float(fixed.moe_s) - float(step.moe_s) == pytest.approx(48 * 40 * units.US)
    # the dense GEMMs read the rest of the weights
    dense = float(weight_bytes_read(base, 1.0)) - experts
    assert float(step.bytes_moved) - float(step.kv_bytes) == pytest.approx(dense + experts)


def test_measured_kernel_tables_are_off_by_default_and_named_when_on(deploy):
    h100 = deploy(max_model_len=4096)
    assert kernel_speed(h100).tier == "generic" and kernel_speed(h100).gemm is None
    on = h100.with_efficiency(measured_scale=1.0)
    speed = kernel_speed(on)
    assert speed.tier == "measured" and "aiconfigurator-core 0.12.0" in speed.source
    # batch 1 of Llama-3.1-8B BF16 on H100: the GEMMs read their weights at the measured 0.84 of bandwidth
    _, bandwidth = speed.gemm(1.0)
    assert float(bandwidth) == pytest.approx(0.84 * on.gpu.memory_bandwidth)
    h200_like = deploy(gpu="h100-pcie", max_model_len=4096).with_efficiency(measured_scale=1.0)
    assert kernel_speed(h200_like).tier == "same architecture"
    amd = deploy(gpu="mi300x", max_model_len=4096).with_efficiency(measured_scale=1.0)
    assert kernel_speed(amd).tier == "generic"
    # DeepSeek's own FP8 checkpoint is block-scaled: it reads the fp8_block curves
    dsv3 = deploy(model="deepseek-v3", gpu="h200", tp=8, max_model_len=4096).with_efficiency(measured_scale=1.0)
    assert kernel_speed(dsv3).source.endswith("fp8_block")


def test_the_event_loop_renders_a_burst_before_submitting_any_of_it():
    serial = 10 * units.MS
    burst = ingested(np.zeros(100), serial)
    assert np.allclose(burst, 100 * serial)  # all 100 reach the engine together, after 1 s
    spaced = ingested(np.arange(5) * 0.1, serial)  # 100 ms apart: each waits only for its own render
    assert np.allclose(spaced, np.arange(5) * 0.1 + serial)
    assert np.array_equal(ingested(np.array([3.0, 1.0]), 0.0), [3.0, 1.0])


def test_the_release_and_endpoint_decide_the_serial_work():
    chat = 7 * units.MS
    tuned = dataclasses.replace(class_efficiency("hbm"), chat_ingest_s=chat)
    assert resolved(tuned, parse_release("vllm", "0.11.0"), "chat").ingest_serial_s == chat
    assert resolved(tuned, parse_release("vllm", "0.18.1"), "chat").ingest_serial_s == chat
    assert resolved(tuned, parse_release("vllm", "0.19.0"), "chat").ingest_serial_s == 0.0  # off the loop
    assert resolved(tuned, parse_release("sglang", "0.5.21"), "chat").ingest_serial_s == chat
    assert resolved(tuned, parse_release("sglang", "0.5.22"), "chat").ingest_serial_s == 0.0
    assert resolved(tuned, parse_release("vllm", "0.11.0"), "completions").ingest_serial_s == 0.0
    assert resolved(tuned, parse_release("sglang", "0.5.3"), "chat").ingest_serial_s == chat
    offline = resolved(tuned, parse_release("trtllm", "1.2.0"), "offline")
    assert offline.ingest_serial_s == offline.request_overhead_s == offline.frontend_per_token_s == 0.0
    with pytest.raises(ValueError, match="endpoint must be one of chat, completions, offline"):
        EngineConfig(endpoint="grpc")


def test_a_chat_burst_on_vllm_0_11_waits_for_every_template(deploy):
    dep = deploy(max_model_len=4096, release=parse_release("vllm", "0.11.0")).with_efficiency(chat_ingest_s=0.0)
    slow = dep.with_efficiency(chat_ingest_s=10 * units.MS)
    lengths = Lengths(mean=200, distribution="fixed"), Lengths(mean=50, distribution="fixed")
    fast = simulate(dep, Traffic(mode="concurrency", concurrency=200), 200, *lengths)
    late = simulate(slow, Traffic(mode="concurrency", concurrency=200), 200, *lengths)
    # every request's first token is at least 200 x 10 ms = 2 s after it was sent
    assert float(np.min(late.ttft)) >= 2.0 > float(np.max(fast.ttft))
    completions = simulate(
        slow.with_engine(endpoint="completions"), Traffic(mode="concurrency", concurrency=200), 200, *lengths
    )
    assert np.allclose(completions.ttft, fast.ttft)


def test_the_endpoint_travels_in_the_scenario_and_a_wrong_one_is_named(deploy, catalog):
    from core.spec.deployment import Workload
    from core.spec.scenario_codec import decode, encode

    dep = deploy(max_model_len=4096).with_engine(endpoint="completions")
    work = Workload(input_len=100, output_len=10)
    data = encode(dep, work, catalog)
    assert data["engine"]["endpoint"] == "completions"
    assert decode(data, catalog)[0] == dep
    assert "endpoint" not in encode(deploy(max_model_len=4096), work, catalog).get("engine", {})  # chat: the default
    data["engine"]["endpoint"] = "grpc"
    with pytest.raises(ValueError, match="endpoint"):
        decode(data, catalog)


def test_the_cli_takes_the_endpoint(cli):
    import json

    code, out, _ = cli("estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--endpoint", "offline", "--json")
    engine = json.loads(out)["engine"]
    assert code == 0 and engine["endpoint"] == "offline" and engine["efficiency"]["request_overhead_ms"] == 0.0
    assert engine["kernel_rates"] == "generic"  # the tables are off unless measured_scale is set
    code, out, _ = cli("estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm")
    assert code == 0 and "chat endpoint" in out and "kernel rates: generic" in out


def test_the_fit_only_varies_what_can_change_a_row_and_leans_to_physical_values():
    from core.validation.dataset import Row
    from core.validation.grouped import FITTED, PHYSICAL, PULL, _relevant, pull

    def row(**fields):
        base = {"engine": "vllm", "engine_version": "0.11.0", "model": "qwen3-14b", "endpoint": "chat"}
        return Row(fields=base | fields)

    assert _relevant("chat_ingest_s", row())
    assert not _relevant("chat_ingest_s", row(endpoint="completions"))
    assert _relevant("chat_ingest_s", row(engine_version="0.17.1"))
    assert not _relevant("chat_ingest_s", row(engine_version="0.19.0"))  # rendered off the loop
    assert not _relevant("chat_ingest_s", row(front_end="offline"))
    assert _relevant("chat_ingest_s", row(engine="sglang", engine_version="0.5.3"))
    assert not _relevant("moe_layer_overhead_s", row()) and _relevant(
        "moe_layer_overhead_s", row(model="qwen3-30b-a3b")
    )
    assert set(PHYSICAL) == set(FITTED) and len(FITTED) * 2 <= 15  # at most 15 named coefficients
    assert pull(PHYSICAL) == 0.0
    far = {name: max(values, key=lambda v: abs(v - PHYSICAL[name])) for name, values in FITTED.items()}
    assert pull(far) == pytest.approx(
        PULL * sum(abs(far[n] - PHYSICAL[n]) / (max(v) - min(v)) for n, v in FITTED.items())
    )


def test_every_scope_waits_for_the_burst_templates(deploy):
    from core.estimate.result import estimate
    from core.spec.deployment import Workload

    base = deploy(max_model_len=4096, release=parse_release("sglang", "0.5.3")).with_efficiency(chat_ingest_s=0.0)
    slow = base.with_efficiency(chat_ingest_s=8 * units.MS)
    work = Workload(input_len=200, output_len=50, batch=100)
    fast, late = estimate(base, work), estimate(slow, work)
    # arriving together: all 100 templates are rendered before any request is scheduled
    assert late.latency.ttft_s - fast.latency.ttft_s == pytest.approx(100 * 8 * units.MS)
    # the burst the simulator steps: every request waits for them too
    assert late.burst.median_s - fast.burst.median_s == pytest.approx(0.8, abs=0.05)
    # clients in a closed loop arrive one at a time: each waits for its own template
    assert late.closed_loop.ttft_s - fast.closed_loop.ttft_s == pytest.approx(8 * units.MS, rel=0.3)
    # completions requests have no template
    plain = estimate(slow.with_engine(endpoint="completions"), work)
    assert plain.latency.ttft_s == pytest.approx(fast.latency.ttft_s)
