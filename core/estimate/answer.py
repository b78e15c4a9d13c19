"""The Explorer's answer in one sentence, first on the page and copyable: the verdict, what binds,
the cheapest single change that makes it fit (with its price per hour), and the steady-state
figures to quote.

The figures to quote are the steady state of B closed-loop clients (:mod:`core.estimate.scope`),
the same rule as Plan's operating point; the headline metrics under it are the burst of B requests
arriving together, labelled as such.
"""

from __future__ import annotations

from core.estimate.advice import Suggestion
from core.estimate.result import Estimate
from core.messages import duration, message
from core.report.money import Rate, money

CHANGES_THE_REQUEST = frozenset({"suggest_batch", "suggest_max_model_len"})
"""Suggestions that run fewer or shorter requests than asked: listed after those that serve them."""
CHANGES_THE_ANSWERS = frozenset({"suggest_weights", "suggest_kv_fp8"})
"""Suggestions that quantize: listed after those that keep the answers as they are."""


def price_per_hour(e: Estimate) -> float | None:
    """GPUs of one replica x the catalog price per GPU-hour [USD/h]; None without a price."""
    price = e.deployment.gpu.price_per_hour
    return e.deployment.parallel.num_gpus * price if price else None


def best_suggestion(suggestions: list[Suggestion]) -> Suggestion | None:
    """The cheapest change that serves the requests as asked and keeps the answers; failing that,
    the cheapest that quantizes; failing that, the cheapest that changes the requests. Ties keep
    the advice's order (:func:`core.estimate.advice.fit_suggestions`)."""

    def rank(item: tuple[int, Suggestion]) -> tuple:
        index, s = item
        price = price_per_hour(s.result)
        return (
            s.notice.code in CHANGES_THE_REQUEST,
            s.notice.code in CHANGES_THE_ANSWERS,
            price is None,
            price or 0.0,
            index,
        )

    ranked = sorted(enumerate(suggestions), key=rank)
    return ranked[0][1] if ranked else None


def steady_sentence(e: Estimate, lang: str = "en") -> str:
    """The steady state of the batch's B clients: the figures to quote."""
    loop = e.closed_loop
    if not loop.stable:
        return message("answer.steady_none", lang, clients=f"{loop.clients:,}")
    return message(
        "answer.steady",
        lang,
        clients=f"{loop.clients:,}",
        running=f"{loop.running:,}",
        ttft=duration(loop.ttft_s),
        tpot=duration(loop.tpot_s),
        rate=f"{loop.output_tokens_per_s:,.0f} tok/s",
    )


def estimate_answer(e: Estimate, suggestions: list[Suggestion], lang: str = "en", rate: Rate | None = None) -> str:
    """Verdict, what binds, the cheapest fix with its price (in Chinese CNY at ``rate`` first), then the
    figures to quote."""
    dep, work, kv = e.deployment, e.workload, e.kv
    gpus = f"{dep.parallel.num_gpus} × {dep.gpu.name}"
    common = {
        "model": dep.model.name,
        "gpus": gpus,
        "fit": f"{kv.max_concurrency_at_request_len:,}",
        "tokens": f"{work.request_len:,}",
        "batch": f"{work.batch:,}",
    }
    if e.memory.kv_budget <= 0:
        parts = [message("answer.no_room", lang, **common)]
    elif not e.fits:
        parts = [message("answer.kv_binds", lang, **common)]
    elif not e.engine_starts:
        parts = [message("answer.no_start", lang, max_model_len=f"{dep.max_model_len:,}", **common)]
    else:
        parts = [message("answer.fits", lang, **common)]
    if not (e.fits and e.engine_starts):
        best = best_suggestion(suggestions)
        if best is None:
            parts.append(message("answer.no_fix", lang))
        else:
            price = price_per_hour(best.result)
            parts.append(
                message(
                    "answer.fix",
                    lang,
                    fix=best.notice.text(lang),
                    price=message("answer.no_price", lang) if price is None else money(price, lang, rate),
                    fit=f"{best.result.kv.max_concurrency_at_request_len:,}",
                )
            )
    if e.memory.kv_budget > 0:
        parts.append(steady_sentence(e, lang))
    return " ".join(parts)
