"""Engine and release as inputs: each rule with a hand-derived figure from the source it was read in
(docs/model.md, "Engine releases")."""

from __future__ import annotations

import dataclasses

import pytest

from core.estimate.result import estimate
from core.memory.budget import gpu_memory
from core.memory.kv import kv_bytes_per_token
from core.memory.weights import weight_bytes_per_gpu
from core.spec import units
from core.spec.deployment import Deployment, Workload
from core.spec.engine import EngineConfig, Parallelism
from core.spec.engine_defaults import sglang_default_fraction, vllm_batch_defaults
from core.spec.precision import KV_PRECISIONS, WEIGHT_PRECISIONS
from core.spec.release import CURRENT, parse_release
from core.timing.phases import plain_decode_step_time
from core.timing.step_fixed import step_fixed_seconds

BF16 = WEIGHT_PRECISIONS["bf16"]


def dep(catalog, model="llama-3.1-8b", gpu="h100-sxm", engine="vllm", version=None, tp=1, **engine_fields):
    return Deployment(
        model=catalog.model(model),
        gpu=catalog.gpu(gpu),
        weights=BF16,
        kv=KV_PRECISIONS["bf16"],
        parallel=Parallelism(tp=tp),
        engine=EngineConfig(release=parse_release(engine, version), **engine_fields),
    )


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("0.6.4.dev9+g5d264f4a", (0, 6, 4)),
        ("v0.19.1rc1.dev339+gedc364896", (0, 19, 1)),
        ("~0.7 (2025-02)", (0, 7, 0)),
        ("0.11.0+torch271", (0, 11, 0)),
        ("", tuple(int(p) for p in CURRENT["vllm"].split("."))),
    ],
)
def test_releases_parse_as_people_write_them(text, version):
    assert parse_release("vllm", text).version == version


def test_unknown_engines_and_too_old_releases_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="engine must be one of vllm, sglang, trtllm"):
        parse_release("llama.cpp", "1.0")
    with pytest.raises(ValueError, match="older than the oldest release"):
        parse_release("vllm", "0.2.5")
    with pytest.raises(ValueError, match="must look like"):
        parse_release("vllm", "latest")
    assert parse_release("tensorrt-llm", "0.19.0").engine == "trtllm"


def test_vllm_charges_cuda_graphs_from_0_20_and_raises_utilization_to_0_92(catalog):
    # 0.20.0 made VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS default to 1 and gpu_memory_utilization 0.92
    old, new = dep(catalog, version="0.19.1"), dep(catalog, version="0.20.0")
    assert old.memory_fraction == 0.90 and new.memory_fraction == 0.92
    assert old.engine.graph_charge_bytes == 0.0 and new.engine.graph_charge_bytes == 0.9 * units.GiB
    # usable 79.19 GiB: the budget moves by 0.02 x usable - 0.9 GiB graphs = +0.68 GiB
    usable = gpu_memory(new).usable
    delta = gpu_memory(new).kv_budget - gpu_memory(old).kv_budget
    assert delta == pytest.approx(0.02 * usable - 0.9 * units.GiB)


@pytest.mark.parametrize(
    ("version", "gpu", "max_model_len", "expected"),
    [
        ("0.6.3", "a100-40gb", 8192, (8192, 256)),  # V0: max(max_model_len, 2048) tokens, 256 seqs
        ("0.6.3", "a100-40gb", 1024, (2048, 256)),
        ("0.6.3", "a100-40gb", 131072, (512, 256)),  # > 32K: chunked prefill, 512 tokens up to 0.6.4
        ("0.6.6", "a100-40gb", 131072, (2048, 256)),  # 2048 from 0.6.5
        ("0.8.0", "l40s", 8192, (2048, 1024)),  # V1 0.8.0-0.8.3: by name (H100/H200), else 2048/1024
        ("0.8.0", "h100-sxm", 8192, (8192, 1024)),
        ("0.8.4", "l40s", 8192, (2048, 256)),
        ("0.8.5", "a100-80gb", 8192, (8192, 1024)),  # >= 70 GiB, A100 included only in 0.8.5
        ("0.9.0", "a100-80gb", 8192, (2048, 256)),
        ("0.27.0", "b200", 8192, (8192, 1024)),
        ("0.28.0", "b200", 8192, (16384, 1024)),  # >= 160 GiB from 0.28
        ("0.28.0", "h200", 8192, (8192, 1024)),
    ],
)
def test_vllm_batch_defaults_follow_the_release(catalog, version, gpu, max_model_len, expected):
    g = catalog.gpu(gpu)
    assert vllm_batch_defaults(parse_release("vllm", version), g.memory_bytes, g.name, max_model_len) == expected


def test_a_v0_engine_profiles_a_whole_max_model_len_prompt(catalog):
    # V0 without chunked prefill profiles max(max_model_len, 2048) tokens: 16K tokens -> twice 8K's forward part
    small = dep(catalog, version="0.6.3", max_model_len=8192)
    large = dep(catalog, version="0.6.3", max_model_len=16384)
    assert small.batch_limits == (8192, 256) and large.batch_limits == (16384, 256)
    assert gpu_memory(large).activations > 1.9 * gpu_memory(small).activations - 0.2 * units.GiB


@pytest.mark.parametrize(
    ("version", "gpu_mib", "tp", "expected"),
    [
        # 0.5.3+: reserved = 512 + 1.5 x max(chunk, 2048) + 2 x cuda_graph_max_bs + tp / 8 x 1024 MiB
        ("0.5.5", 81559, 1, 0.835),  # H100: 512 + 12288 + 512 + 128 = 13440 -> (81559 - 13440) / 81559
        ("0.5.5", 81559, 8, 0.818),  # tp 8: cuda graphs 512, + 1024 -> 14848
        ("0.5.5", 24564, 1, 0.847),  # RTX 4090: chunk 2048, graphs 24: 512 + 3072 + 48 + 128 = 3760
        ("0.5.10", 81559, 1, 0.830),  # piecewise CUDA graphs add 464 MiB
        ("0.5.0", 81559, 1, 0.874),  # 0.4.8-0.5.2: reserved (9.5 + 1/2) GiB below 90 GiB
        ("0.4.0", 81559, 4, 0.85),  # 0.3-0.4.5: by tp only
        ("0.5.8", 294912, 8, 0.908),  # MI355X: 512 + 24576 + 1024 + 1024 = 27136 (before the VLM factor)
    ],
)
def test_sglang_default_fraction_by_release(version, gpu_mib, tp, expected):
    assert sglang_default_fraction(parse_release("sglang", version), gpu_mib, tp) == pytest.approx(expected, abs=1e-3)


def test_sglang_pool_is_its_fraction_of_the_free_memory_less_the_weights(catalog):
    # a 2025 RTX 3090 log (SGLang ~0.4.2, DeepSeek-R1-Distill-Qwen-7B, f 0.88): 105,531 tokens
    d = dep(catalog, model="deepseek-r1-distill-qwen-7b", gpu="rtx-3090", engine="sglang", version="0.4.2")
    memory = gpu_memory(d)
    weights = weight_bytes_per_gpu(d.model, d.weights, d.parallel)
    expected = 0.88 * (memory.usable - 0.9 * units.GiB) - weights
    assert d.memory_fraction == 0.88 and memory.kv_budget == pytest.approx(expected)
    tokens = estimate(d, Workload(input_len=1, output_len=1)).kv.capacity_tokens
    assert tokens == int(expected // kv_bytes_per_token(d.model, d.kv, d.parallel))  # page size 1
    assert tokens == pytest.approx(105_531, rel=0.05)
    # activations and CUDA graphs live outside the pool: the parts still add up to the GPU
    parts = memory.driver_reserved + memory.held_back + memory.non_kv + memory.kv_budget
    assert parts == pytest.approx(memory.capacity)


def test_trtllm_pool_is_its_fraction_of_what_is_free_after_weights_and_the_profile(catalog):
    d = dep(catalog, engine="trtllm", version="1.0")
    m = gpu_memory(d)
    assert d.memory_fraction == 0.9 and d.engine.block_tokens == 32
    assert m.kv_budget == pytest.approx(0.9 * (m.usable - m.weights - m.activations - m.overhead))
    assert d.batch_limits == (8192, 2048)  # trtllm-serve's max_num_tokens, max_batch_size


def test_non_torch_memory_with_tensor_parallel_follows_the_link(catalog):
    nvlink = dep(catalog, gpu="h100-sxm", tp=2, version="0.19.0")
    pcie = dep(catalog, gpu="l40s", tp=2, version="0.19.0")
    assert gpu_memory(nvlink).overhead == pytest.approx(2.1 * units.GiB)  # NCCL buffers on NVLink (0.19 logs)
    assert gpu_memory(pcie).overhead == pytest.approx(0.2 * units.GiB)  # 0.20 GiB on PCIe cards (#14447)


def test_host_cost_per_sequence_is_the_releases(catalog):
    # V0 (< 0.8): the class's fitted v0_per_sequence_s (250 us on HBM GPUs, report.json); V1, SGLang: 2.5 us
    v0 = dep(catalog, version="0.6.3")
    assert v0.efficiency.per_sequence_overhead_s == pytest.approx(v0.efficiency.v0_per_sequence_s)
    assert v0.efficiency.v0_per_sequence_s == pytest.approx(250 * units.US)
    assert dep(catalog, version="0.19.0").efficiency.per_sequence_overhead_s == pytest.approx(2.5 * units.US)
    assert dep(catalog, engine="sglang").efficiency.per_sequence_overhead_s == pytest.approx(2.5 * units.US)


def test_vllm_v1_exposes_its_host_work_until_async_scheduling_became_the_default(catalog):
    # async_scheduling defaults to False through 0.13 (opt-in --async-scheduling), None -> True from 0.14.0
    # (vllm-project/vllm#27614): 5 us per sequence exposed before (GPUStack gpt-oss-20b, H100, ~1000 streams:
    # ITL 31.9 -> 27.0 ms with --async-scheduling), 2.5 us after
    for version in ("0.8.0", "0.11.0", "0.13.0"):
        assert dep(catalog, version=version).efficiency.per_sequence_overhead_s == pytest.approx(5 * units.US)
    for version in ("0.14.0", "0.33.0"):
        assert dep(catalog, version=version).efficiency.per_sequence_overhead_s == pytest.approx(2.5 * units.US)
    assert dep(catalog, engine="trtllm").efficiency.per_sequence_overhead_s == pytest.approx(2.5 * units.US)


def test_a_step_costs_its_fixed_part_plus_each_layers_launches(catalog):
    # 0.5 ms + 32 layers x 20 us = 1.14 ms for Llama-3.1-8B; 80 layers (Llama-3.1-70B) 2.1 ms
    assert step_fixed_seconds(dep(catalog)) == pytest.approx(1.14 * units.MS)
    assert step_fixed_seconds(dep(catalog, model="llama-3.1-70b", tp=4)) == pytest.approx(2.1 * units.MS)


def test_the_api_server_bounds_a_step_from_below_it_does_not_add_to_it(catalog):
    base = dep(catalog)
    slow_front = base.with_efficiency(frontend_per_token_s=150 * units.US)
    # batch 1: 150 us of front-end work hides under a ~5 ms GPU step
    one = plain_decode_step_time(base, 1, 1000)
    assert plain_decode_step_time(slow_front, 1, 1000).seconds == pytest.approx(one.seconds)
    # batch 512: the front end needs 512 x 150 us = 76.8 ms, more than the GPU's step (about 51 ms)
    big = plain_decode_step_time(slow_front, 512, 1000)
    assert big.gpu_seconds < 76.8 * units.MS and big.seconds == pytest.approx(76.8 * units.MS)


def test_cli_takes_engine_and_release(cli):
    code, out, _ = cli("estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--engine", "sglang")
    assert code == 0 and f"engine: SGLang {CURRENT['sglang']}" in out
    code, _, err = cli("estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--engine-version", "0.1.0")
    assert code == 2 and "older than the oldest release" in err and len(err.strip().splitlines()) == 1
    code, _, err = cli("estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--engine", "tgi")
    assert code == 2 and "engine must be one of" in err


def test_the_launch_command_is_the_engines(deploy):
    from core.planning.check import check
    from core.planning.launch import serve_command
    from core.planning.requirement import Requirement

    requirement = Requirement(users=4, prompt_len=1024, answer_len=256)
    for engine, start in (
        ("vllm", "vllm serve"),
        ("sglang", "python -m sglang.launch_server"),
        ("trtllm", "trtllm-serve"),
    ):
        plan = check(deploy(release=parse_release(engine)), requirement)
        command = serve_command(plan)
        assert command.command.startswith(start)
        assert f"{plan.deployment.memory_fraction:.2f}" in command.command
        assert str(plan.estimate.kv.capacity_tokens) in command.expected_log[0].replace(",", "")


def test_routed_experts_are_read_at_the_expert_efficiency(catalog):
    from core.timing.work import expert_bytes_read, weight_bytes_read

    base = dep(catalog, model="qwen3-30b-a3b").with_efficiency(expert=1.0)
    slow = base.with_efficiency(expert=0.5)
    fast_step, slow_step = plain_decode_step_time(base, 64, 1000), plain_decode_step_time(slow, 64, 1000)
    # at half the expert efficiency the expert bytes take twice as long: + expert bytes / (bw x eff)
    experts = float(expert_bytes_read(base, 64))
    extra = experts / (base.gpu.memory_bandwidth * base.efficiency.bandwidth)
    assert 0 < experts < float(weight_bytes_read(base, 64))
    assert slow_step.memory_s == pytest.approx(fast_step.memory_s + extra)
    dense = dep(catalog)  # a dense model has no routed experts: the factor changes nothing
    assert plain_decode_step_time(dense.with_efficiency(expert=0.5), 64, 1000).seconds == pytest.approx(
        plain_decode_step_time(dense, 64, 1000).seconds
    )


def test_vllm_v0_host_cost_is_its_own_constant(catalog):
    v0 = dep(catalog, version="0.6.3")
    assert v0.efficiency.per_sequence_overhead_s == v0.efficiency.v0_per_sequence_s
    assert v0.with_efficiency(v0_per_sequence_s=100 * units.US).efficiency.per_sequence_overhead_s == pytest.approx(
        100 * units.US
    )
    v1 = dep(catalog, version="0.19.0").with_efficiency(v0_per_sequence_s=100 * units.US)
    assert v1.efficiency.per_sequence_overhead_s == pytest.approx(2.5 * units.US)


def test_sharegpt_lengths_have_its_spread_around_the_stated_means():
    import numpy as np

    from core.serving.traffic import SHAREGPT_SIGMA, dataset_lengths

    prompts, answers = dataset_lengths("sharegpt", 221, 199)
    rng = np.random.default_rng(0)
    drawn = answers.sample(200_000, rng, 100_000)
    # log-normal around the mean: median = mean x exp(-sigma^2 / 2) = 199 x 0.655 = 130 (ShareGPT's)
    assert SHAREGPT_SIGMA["output"] == pytest.approx(np.sqrt(2 * np.log(199 / 130)), abs=0.01)
    assert np.median(drawn) == pytest.approx(130, rel=0.03) and drawn.mean() == pytest.approx(199, rel=0.03)
    assert np.median(prompts.sample(200_000, rng, 100_000)) == pytest.approx(108, rel=0.05)
    assert dataset_lengths("", 100, 10)[0].distribution == "fixed"
    with pytest.raises(ValueError, match="fixed, uniform or sharegpt"):
        dataset_lengths("alpaca", 100, 10)


def test_sglang_random_lengths_span_one_to_the_nominal_length():
    # SGLang's bench_serving at its default --random-range-ratio 0 draws each length uniform over [1, nominal]:
    # 80 requests at a nominal 1,000 gave 39,668 prompt tokens (mean 496). The validation rows state that mean.
    import numpy as np

    from core.serving.traffic import dataset_lengths

    prompts, answers = dataset_lengths("uniform", 496, 510)
    drawn = prompts.sample(200_000, np.random.default_rng(0), 100_000)
    assert drawn.mean() == pytest.approx(496, rel=0.01)
    assert drawn.min() == 1 and drawn.max() == pytest.approx(992, abs=1)
    assert answers.distribution == "uniform" and answers.longest == 1020


@pytest.mark.parametrize("engine", ["sglang", "trtllm"])
def test_a_model_too_big_for_sglang_or_trtllm_says_by_how_much(catalog, engine):
    # Llama-3.1-70B in BF16 on one H100: the shortfall is the weights beyond what the engine gives them
    d = dep(catalog, model="llama-3.1-70b", engine=engine)
    e = estimate(d, Workload(input_len=1024, output_len=256))
    m = e.memory
    assert not e.fits and m.held_back >= 0
    available = m.capacity - m.driver_reserved - m.held_back
    short = next(w for w in e.warnings if w.code == "does_not_fit").params
    assert dict(short)["short"] == f"{(m.non_kv - available) / units.GiB:.2f} GiB"
    if engine == "sglang":  # weights must fit fraction x (usable - context)
        assert m.non_kv - available == pytest.approx(m.weights - d.memory_fraction * (m.usable - 0.9 * units.GiB))


def test_only_vllm_refuses_to_start_when_one_max_model_len_request_does_not_fit(catalog):
    work = Workload(input_len=1024, output_len=256)
    for engine, refuses in (("vllm", True), ("sglang", False)):
        e = estimate(dep(catalog, gpu="a10", engine=engine), work)  # 131,072-token context, 3-4 GiB of KV
        assert (not e.engine_starts) is refuses
        assert any(w.code == "vllm_refuses_start" for w in e.warnings) is refuses


def test_a_token_budget_below_max_num_seqs_is_said_where_the_sidebar_can_combine_it(catalog):
    # the CLI refuses --max-num-batched-tokens 512 with --max-num-seqs 1024; the sidebar's two lists can combine them
    work = Workload(input_len=512, output_len=128)
    said = estimate(dep(catalog, max_num_batched_tokens=512, max_num_seqs=1024), work)
    (warning,) = [w for w in said.warnings if w.code == "vllm_refuses_batch_budget"]
    assert dict(warning.params) == {"tokens": "512", "seqs": "1024"}
    for fine in (dep(catalog, max_num_batched_tokens=2048, max_num_seqs=1024), dep(catalog, max_num_seqs=1024)):
        assert not any(w.code == "vllm_refuses_batch_budget" for w in estimate(fine, work).warnings)
    other = estimate(dep(catalog, engine="sglang", max_num_batched_tokens=512, max_num_seqs=1024), work)
    assert not any(w.code == "vllm_refuses_batch_budget" for w in other.warnings)


def test_gpus_without_a_fast_link_get_the_pcie_non_torch_figure():
    config = EngineConfig()
    for link in ("pcie", "none", "ethernet", ""):
        assert config.non_torch(Parallelism(tp=2), link) == pytest.approx(0.2 * units.GiB)
    assert config.non_torch(Parallelism(tp=2), "infinity-fabric") == pytest.approx(2.1 * units.GiB)


def test_a_draft_model_costs_its_gpu_time_not_the_api_servers_floor(catalog):
    from core.levers.settings import Levers, Speculative
    from core.timing.phases import decode_step_time

    base = dep(catalog).with_efficiency(frontend_per_token_s=60 * units.US)
    draft = catalog.model("llama-3.2-1b")
    spec = dataclasses.replace(base, levers=Levers(speculative=Speculative(method="draft", draft=draft, k=4)))
    step = decode_step_time(spec, 256, 1000)
    # the API server streams E tokens per sequence per step: its floor per emitted token stays 256 x 60 us
    assert step.frontend_s == pytest.approx(256 * 60 * units.US)
    assert step.side_s < step.frontend_s  # four 1B-model passes at batch 256 cost less than that floor


def test_a_release_newer_than_the_rules_is_refused_or_said_so(catalog, cli):
    # vLLM: a release after the newest read is refused, in the core, the CLI and everywhere that parses one
    # (0.34.0 changed the KV sizing; 9999 taken as 0.34's rule would be another release's rule in silence)
    for text in ("9999.0.0", "0.35.0", "1.0.0"):
        with pytest.raises(ValueError, match=r"engine version .*vLLM releases after 0\.34\.x are not modelled"):
            parse_release("vllm", text)
    # a patch release of the newest keeps its rules: taken, and named as newer than the rules read
    patch = estimate(dep(catalog, version="0.34.1"), Workload(input_len=512, output_len=128))
    assert any(w.code == "release_newer_than_rules" for w in patch.warnings)
    code, _, err = cli("estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--engine-version", "9999.0.0")
    assert code != 0 and "not modelled" in err and "Traceback" not in err
    code, _, err = cli("check", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--engine-version", "0.35.0")
    assert code != 0 and "not modelled" in err
    # 0.34.0 itself is modelled: no "taken as another release's" warning
    work = Workload(input_len=512, output_len=128)
    modelled = estimate(dep(catalog, version="0.34.0"), work)
    assert not any(w.code == "release_newer_than_rules" for w in modelled.warnings)
    # SGLang and TensorRT-LLM after theirs: accepted and named in the estimate's warnings (text and JSON)
    newer = estimate(dep(catalog, engine="sglang", version="0.5.9"), work)
    assert any(w.code == "release_newer_than_rules" for w in newer.warnings)
    assert not any(w.code == "release_newer_than_rules" for w in estimate(dep(catalog), work).warnings)


def test_the_attention_backend_is_named_for_vllm_only(cli):
    import json

    for engine, named in (("vllm", True), ("sglang", False)):
        code, out, _ = cli("estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--engine", engine, "--json")
        assert code == 0 and (json.loads(out)["engine"]["attention_backend"] is not None) is named
