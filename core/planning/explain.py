"""The Plan's headline numbers explained: TTFT, TPOT and output throughput at the continuous-batching
steady state (:mod:`core.timing.steady_state`), with this plan's values, as
:class:`~core.estimate.explain_memory.Explanation` records; the memory numbers come from the plan's
static estimate (:func:`core.estimate.explain.explain`).
"""

from __future__ import annotations

from core.estimate.explain import MEMORY, explain, ms
from core.estimate.explain_memory import Explanation, num
from core.planning.answer import quoted_ttft_s
from core.planning.check import Plan

MEMORY_KEYS = ("weights", "kv_per_token", "kv_budget", "max_concurrency")


def plan_explanations(plan: Plan) -> dict[str, Explanation]:
    """TTFT, TPOT and throughput at the plan's operating point, then its memory numbers, by key."""
    state, dep, req = plan.state, plan.deployment, plan.requirement
    request = dep.efficiency.request_delay_s(1.0)
    dp = dep.parallel.dp
    free = state.decode_step_s / state.tpot_s  # the share of time no rank spends on prompt chunks (steady_state)
    # the prompt's own steps and the others' chunks riding in them: TTFT - the rest of the step in progress
    steps = state.ttft_s - request - state.tpot_s / 2
    source = "core/timing/steady_state.py; docs/model.md, Requirement check"
    share = r"(1 - \lambda t_p)" if dp == 1 else rf"(1 - \lambda t_p / {dp})^{{{dp}}}"
    if plan.queued and not plan.unbounded:  # the engine is full: the wait for a slot comes first
        ttft = Explanation(
            "plan_ttft_queued",
            r"\text{TTFT} = W + \frac{TPOT}{2} + t_{steps} + T_{request},\quad W = \frac{U \times E2E}{B} - Z - E2E",
            rf"\text{{TTFT}} = {ms(plan.queue_wait_s)} + {ms(state.tpot_s / 2)} + {ms(steps)}"
            rf" + {ms(request)} = {ms(quoted_ttft_s(plan))}\ \text{{ms}}"
            rf"\quad (B = {num(plan.running)},\ E2E = {num(state.engine_e2e_s, 5)}\,\text{{s}})",
            quoted_ttft_s(plan),
            "s",
            "core/estimate/scope.py admission_wait; " + source,
        )
    else:
        ttft = Explanation(
            "plan_ttft",
            r"\text{TTFT} = \frac{TPOT}{2} + t_{steps} + T_{request},"
            r"\quad t_{steps} = k\,t_{mix}(B, I/k) + \lambda\,TPOT\,t_p / k",
            rf"\text{{TTFT}} = {ms(state.tpot_s / 2)} + {ms(steps)} + {ms(request)}"
            rf" = {ms(state.ttft_s)}\ \text{{ms}}",
            state.ttft_s,
            "s",
            source,
        )
    found = {
        "ttft": ttft,
        "tpot": Explanation(
            "plan_tpot",
            r"\text{TPOT} = \frac{t_d(B)}{" + share + r"},\quad \lambda = \frac{B}{E2E},"
            r"\quad t_p = k\,(t_{mix}(B, I/k) - t_{mix}(B, 0))",
            rf"\text{{TPOT}} = \frac{{{ms(state.decode_step_s)}}}{{{free:.4f}}} = {ms(state.tpot_s)}\ \text{{ms}}"
            rf"\quad (B = {num(state.batch)},\ \lambda = {num(state.request_rate)}/\text{{s}},"
            rf"\ t_p = {ms(state.prefill_s)}\ \text{{ms}},\ k = {num(state.chunks)})",
            state.tpot_s,
            "s",
            source,
        ),
        "throughput": Explanation(
            "plan_throughput",
            r"\text{output tokens/s} = \lambda \times O = \frac{B}{E2E} \times O",
            rf"\frac{{{num(state.batch)}}}{{{num(state.engine_e2e_s, 5)}\,\text{{s}}}} \times {req.answer_len}"
            rf" = {num(state.request_rate * req.answer_len)}\ \text{{tok/s}}",
            state.request_rate * req.answer_len,
            "tok/s",
            source,
        ),
    }
    static = explain(plan.estimate, MEMORY)  # Plan quotes the steady state's timing: no burst to step for it
    return found | {key: static[key] for key in MEMORY_KEYS}
