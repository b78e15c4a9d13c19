"""How fast an engine runs on a GPU beyond what the datasheet says: the efficiency factors and
overheads of the timing model, each named, range-checked and sourced, their fitted defaults per GPU
memory class, and the rules that follow the engine's release and the endpoint a client calls.

The API server between the users and the engine (:func:`resolved`):
- ``offline``: in-process (vLLM's ``LLM.generate``, ``trtllm-bench``): no API server, so no request
  overhead, no work per streamed token and no event loop;
- ``chat`` (/v1/chat/completions): the server renders the chat template; where it does so on its one
  event loop, synchronously (vLLM before 0.19, SGLang before 0.5.22, TensorRT-LLM:
  :attr:`core.spec.release.Release.renders_chat_on_loop`), every request costs the loop
  ``chat_ingest_s`` one after another (:mod:`core.serving.arrivals`);
- ``completions`` (/v1/completions, SGLang's /generate): no template.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from core.spec import units
from core.spec.release import Release, current_release

ENDPOINTS = ("chat", "completions", "offline")
"""The ways a client reaches the engine (module docstring); ``chat`` unless set."""


@dataclass(frozen=True, kw_only=True)
class Efficiency:
    """Achievable fractions of datasheet peaks and fixed costs: assumptions, shown to the user.

    Defaults (sources in docs/model.md):
    - compute 0.5: prefill model-FLOPs utilization; Databricks' TTFT figures imply about 48 % of
      dense BF16 peak on an A100, analytic simulators calibrated on vLLM use 0.38-0.45.
    - bandwidth 0.75: decode model-bandwidth utilization; Databricks measured 55-60 % on 2-4 GPUs
      at batch 1 (it falls with TP), single-GPU vLLM decode reaches 65-80 %.
    - link 0.75: all-reduce bus bandwidth over one-direction link bandwidth (nccl-tests: about
      370 of 450 GB/s on H100 NVLink, 200-230 of 300 GB/s on A100, 20-25 of 32 GB/s on PCIe 4).
    - step_overhead_s 0.5 ms and layer_overhead_s 20 us: the fixed cost of an engine step
      (scheduling, sampling) and the launches of each layer's kernels, as inference-sim calibrates
      them on vLLM; a step of an 80-layer model costs 0.5 + 80 x 0.02 = 2.1 ms beside its work.
    - per_sequence_overhead_s None: the engine release's host cost per scheduled sequence
      (:data:`core.spec.release.HOST_COST_PER_SEQUENCE_S`: 2.5 us where the engine overlaps it with the
      GPU, 5 us in vLLM V1 before async scheduling became the default in 0.14; v0_per_sequence_s in V0).
    - request_overhead_s 20 ms, expert 1.0, frontend_per_token_s 0: see each field.
    - allreduce_latency_s 10 us: fixed cost of one small all-reduce (vLLM's custom all-reduce).
    """

    compute: float = 0.5
    bandwidth: float = 0.75
    link: float = 0.75
    step_overhead_s: float = 0.5 * units.MS
    layer_overhead_s: float = 20 * units.US
    """Kernel launches of one layer in one step (all layers run in every step, across pipeline stages) [s]."""
    per_sequence_overhead_s: float | None = None
    """Host-side cost per scheduled sequence per step (scheduling, output handling) [s]; None: the
    release's (V1, SGLang, TensorRT-LLM: HOST_COST_PER_SEQUENCE_S; vLLM V0: v0_per_sequence_s)."""
    v0_per_sequence_s: float = 20 * units.US
    """vLLM V0's host work per scheduled sequence between steps [s]: scheduling, input preparation and
    output pythonization ran while the GPU waited (about 4 ms per decode step of a few hundred
    sequences in vllm-project/vllm#6854; fitted per GPU class, docs/accuracy.md)."""
    request_overhead_s: float = 20 * units.MS
    """Time from a request's arrival until the engine schedules it: API server, tokenization [s].
    20 ms: vllm-project/vllm#17866 measured a 21.0 ms median TTFT for 500-token prompts of
    Llama-3.2-1B at low load (V1, 2025-05), of which the prefill is about 1-2 ms."""
    chat_ingest_s: float = 0.0
    """The API server's work per chat request done on its one event loop, one request after another [s]:
    the chat template rendered synchronously in the request handler (vLLM before 0.19:
    ``_preprocess_chat``, entrypoints/openai/serving_engine.py; SGLang before 0.5.22; TensorRT-LLM), where
    the release does so (:attr:`core.spec.release.Release.renders_chat_on_loop`). A burst of N requests
    reaches the engine after N x this (:mod:`core.serving.arrivals`)."""
    ingest_serial_s: float | None = None
    """The serial event-loop work per request in effect [s]; None: the endpoint's and release's rule
    (:func:`resolved`: ``chat_ingest_s`` for chat requests where the template is rendered on the loop, else 0)."""
    expert: float = 1.0
    """The bandwidth the MoE kernels (grouped GEMMs over the routed experts the step's tokens touch) reach
    on the experts' weights, as a share of what the dense GEMMs reach: a few tokens per expert and
    tensor-split expert matrices read slower than one large matrix (:mod:`core.timing.roofline`)."""
    measured_scale: float = 0.0
    """Scale on the measured kernel rates where a kernel table applies (:mod:`core.timing.kernel_speed`):
    1 is the kernel as timed alone; 0 (the default) keeps every GPU at the constant efficiencies. The
    tables are off by default because, held out by source, they predict serving worse than the fitted
    constants (docs/accuracy.md, "Mechanisms tried and not shipped")."""
    moe_layer_overhead_s: float = 0.0
    """Fixed cost of one MoE layer in one step [s]: the router, top-k, token sort and combine kernels
    around the grouped GEMMs."""
    frontend_per_token_s: float = 0.0
    """The API server's work per streamed token (detokenizing, one SSE chunk) [s]. It runs in its
    own process beside the engine (vLLM V1, SGLang, TensorRT-LLM's server), so a step lasts at
    least running sequences x this: the ceiling of one front-end process on total tokens/s."""
    allreduce_latency_s: float = 10.0 * units.US
    eager_layer_launch_s: float = 50.0 * units.US
    """Host time to launch one layer's kernels in a step run without CUDA graphs (a step above the
    largest capture size, :mod:`core.timing.step_fixed`) [s]: the GPU cannot run the step's kernels
    faster than the host launches them, so they take at least layers x this. A physical starting
    value, not fitted: ~10 kernels a layer at ~5 us of host time each. It binds only where a layer's
    kernels are shorter than their launches (small models); at the > 512 tokens that leave the graphs
    a 7B+ model's layer runs for longer, so its launches hide."""

    def request_delay_s(self, together=1.0):
        """From a request's send to the engine scheduling it [s]: the request overhead, plus the event
        loop's serial work for the ``together`` requests sent at once (a burst of B waits for B chat
        templates before any is scheduled, :mod:`core.serving.arrivals`); arrays broadcast."""
        return self.request_overhead_s + (self.ingest_serial_s or 0.0) * together

    def __post_init__(self) -> None:
        for name in ("compute", "bandwidth", "link", "expert"):
            value = getattr(self, name)
            if not 0.01 <= value <= 1.0:
                raise ValueError(f"efficiency {name} must be between 0.01 and 1, got {value!r}")
        for name, high, shown in (
            ("step_overhead_s", 1.0, "1 s"),
            ("request_overhead_s", 10.0, "10 s"),
            ("frontend_per_token_s", 0.01, "10 ms"),
            ("v0_per_sequence_s", 0.01, "10 ms"),
            ("measured_scale", 2.0, "2"),
            ("chat_ingest_s", 1.0, "1 s"),
            ("ingest_serial_s", 1.0, "1 s"),
            ("moe_layer_overhead_s", 0.01, "10 ms"),
            ("layer_overhead_s", 0.01, "10 ms"),
            ("per_sequence_overhead_s", 0.01, "10 ms"),
            ("allreduce_latency_s", 0.1, "0.1 s"),
            ("eager_layer_launch_s", 0.01, "10 ms"),
        ):
            value = getattr(self, name)
            if value is not None and not 0 <= value <= high:  # None: left to the release's rule
                raise ValueError(f"{name} must be between 0 and {shown}, got {value!r}")


CLASS_EFFICIENCY: dict[str, Efficiency] = {
    # the constants fitted on every source of data/validation (report.json "fit", docs/accuracy.md),
    # the grid point with the lowest median error over TTFT (median and P99), TPOT and output throughput
    # per class, pulled toward the physical starting values; each source's own error is measured with
    # constants fitted without it
    "hbm": Efficiency(
        compute=0.5,
        bandwidth=0.6,
        frontend_per_token_s=0.0,
        expert=0.35,
        moe_layer_overhead_s=50 * units.US,
        chat_ingest_s=8 * units.MS,
        v0_per_sequence_s=250 * units.US,
    ),
    "gddr": Efficiency(
        compute=0.7,
        bandwidth=0.75,
        frontend_per_token_s=0.0,
        expert=1.0,
        moe_layer_overhead_s=0.0,
        chat_ingest_s=0.0,
        v0_per_sequence_s=20 * units.US,
    ),
}
"""Defaults per GPU memory class; GPUs of no known class (custom ones) get Efficiency()."""
FALLBACK_EFFICIENCY = Efficiency()


def class_efficiency(memory_type: str) -> Efficiency:
    """The efficiency factors of a GPU memory class ('hbm', 'gddr'), the release's rules not yet applied."""
    return CLASS_EFFICIENCY.get(memory_type) or FALLBACK_EFFICIENCY


def default_efficiency(memory_type: str, release: Release | None = None, endpoint: str = "chat") -> Efficiency:
    """The efficiency factors a GPU of this memory class gets unless set, with the rules of
    ``release`` (the current vLLM when None) and ``endpoint``."""
    return resolved(class_efficiency(memory_type), release, endpoint)


def resolved(efficiency: Efficiency, release: Release | None = None, endpoint: str = "chat") -> Efficiency:
    """``efficiency`` with what it leaves to the release and the endpoint filled in: the host cost per
    sequence (vLLM V0: ``v0_per_sequence_s``; V1, SGLang, TensorRT-LLM: the release's), and the API
    server's serial work per request (``chat_ingest_s`` for chat where the release renders the template on
    its event loop, else 0); ``offline`` (in-process, no API server) has no request overhead, no work
    per streamed token and no event loop."""
    release = release or current_release()
    changes: dict[str, float] = {}
    if efficiency.per_sequence_overhead_s is None:
        v0 = release.engine == "vllm" and not release.vllm_v1
        changes["per_sequence_overhead_s"] = efficiency.v0_per_sequence_s if v0 else release.host_cost_per_sequence_s
    if endpoint == "offline":
        changes.update(request_overhead_s=0.0, frontend_per_token_s=0.0, ingest_serial_s=0.0)
    elif efficiency.ingest_serial_s is None:
        on_loop = endpoint == "chat" and release.renders_chat_on_loop
        changes["ingest_serial_s"] = efficiency.chat_ingest_s if on_loop else 0.0
    return dataclasses.replace(efficiency, **changes) if changes else efficiency


def efficiency_fields(eff: Efficiency) -> dict[str, float]:
    """The factors in effect as ``estimate --json`` shows them (ms and us where those read better)."""
    fields = {
        "compute": eff.compute,
        "bandwidth": eff.bandwidth,
        "link": eff.link,
        "step_overhead_ms": eff.step_overhead_s / units.MS,
        "layer_overhead_us": eff.layer_overhead_s / units.US,
        "per_sequence_overhead_us": (eff.per_sequence_overhead_s or 0.0) / units.US,
        "frontend_per_token_us": eff.frontend_per_token_s / units.US,
        "request_overhead_ms": eff.request_overhead_s / units.MS,
        "ingest_serial_ms": (eff.ingest_serial_s or 0.0) / units.MS,
        "expert": eff.expert,
        "moe_layer_overhead_us": eff.moe_layer_overhead_s / units.US,
        "eager_layer_launch_us": eff.eager_layer_launch_s / units.US,
        "measured_scale": eff.measured_scale,
    }
    return {name: round(value, 6) for name, value in fields.items()}
