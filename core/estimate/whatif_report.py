"""The what-if figures as plain data (``estimate --json``'s "levers") and as text (``estimate``)."""

from __future__ import annotations

from typing import Any

from core.estimate.whatif import Comparison, WhatIf
from core.messages import duration
from core.spec import units


def _round(value: float, digits: int = 3) -> float:
    return round(float(value), digits)


def _comparison(c: Comparison) -> dict[str, Any]:
    def figures(e) -> dict[str, float]:
        return {
            "ttft_ms": _round(e.latency.ttft_s / units.MS),
            "tpot_ms": _round(e.latency.tpot_s / units.MS),
            "output_tokens_per_s": _round(e.throughput.output_tokens_per_s, 2),
            "max_concurrency": e.kv.max_concurrency_at_request_len,
            "kv_budget_gib": _round(e.memory.kv_budget / units.GiB),
            "fits": e.fits,
        }

    return {"without": figures(c.without), "with": figures(c.with_)}


def whatif_to_dict(w: WhatIf) -> dict[str, Any]:
    """Per lever that is on: its settings, its own figures, and the workload without and with it."""
    levers = w.result.deployment.levers
    out: dict[str, Any] = {}
    if (s := w.speculative) is not None:
        spec = levers.speculative
        out["speculative"] = {
            "method": spec.method,
            "draft_model": spec.draft.id if spec.draft else None,
            "k": spec.k,
            "acceptance": spec.acceptance,
            "tokens_per_step": _round(s.tokens_per_step),
            "proposer_gib": _round(s.proposer_bytes / units.GiB),
            "break_even_batch": s.break_even_batch,
            **_comparison(s.comparison),
        }
    if (p := w.prefix) is not None:
        out["prefix_caching"] = {
            "shared_tokens": int(p.shared_tokens),
            "hit_rate": levers.prefix.hit_rate,
            "cached_tokens_per_request": int(p.cached_tokens),
            "shared_kv_gib": _round(p.shared_bytes / units.GiB),
            **_comparison(p.comparison),
        }
    if (o := w.offload) is not None:
        out["offload"] = {
            "weights_gib": _round(levers.offload.weights_bytes / units.GiB),
            "kv_gib": _round(levers.offload.kv_bytes / units.GiB),
            "host_link": w.result.deployment.gpu.host_link_generation,
            "host_bandwidth_gb_s": _round(o.host_bandwidth / units.GB, 1),
            "weights_ms_per_step": _round(o.weights_s_per_step / units.MS),
            "spilled_kv_gib": _round(o.spilled_bytes / units.GiB),
            "spill_ms_per_step": _round(o.spill_s_per_step / units.MS),
            "weights_gib_needed_to_fit": _round(o.weights_needed_to_fit / units.GiB),
            **_comparison(o.comparison),
        }
    if (lo := w.lora) is not None:
        out["lora"] = {
            "adapters": levers.lora.adapters,
            "rank": levers.lora.rank,
            "targets": levers.lora.targets,
            "mib_per_adapter": _round(lo.bytes_per_adapter / units.MiB, 1),
            "max_adapters_beside_kv": lo.max_adapters,
            **_comparison(lo.comparison),
        }
    if (a := w.attention) is not None:
        out["attention"] = {
            "kernel": levers.attention,
            "scores_gib": _round(a.profile_bytes / units.GiB),
            "oom_prompt_len": a.oom_prompt_len,
            **_comparison(a.comparison),
        }
    return out


def format_whatif(w: WhatIf) -> str:
    """One block per lever: its figures, then without -> with for TTFT, TPOT, throughput, concurrency."""
    data = whatif_to_dict(w)
    if not data:
        return ""
    lines = ["", "optimizations (each against the same setup with it turned off)"]
    for name, entry in data.items():
        settings = {k: v for k, v in entry.items() if k not in ("with", "without")}
        lines.append(f"  {name}: " + ", ".join(f"{k} {v}" for k, v in settings.items()))
        before, after = entry["without"], entry["with"]
        lines.append(
            f"    TTFT {_shown(before['ttft_ms'])} -> {_shown(after['ttft_ms'])}, "
            f"TPOT {_shown(before['tpot_ms'])} -> {_shown(after['tpot_ms'])}, "
            f"output {before['output_tokens_per_s']:.1f} -> {after['output_tokens_per_s']:.1f} tokens/s, "
            f"max concurrency {before['max_concurrency']} -> {after['max_concurrency']}"
            + ("" if before["fits"] else " (without it the workload does not fit)")
        )
    return "\n".join(lines)


def _shown(ms: float) -> str:
    """A duration of the JSON [ms] as the text shows every duration (:func:`core.messages.duration`)."""
    return duration(ms * units.MS)
