"""A plan as a document to share: Markdown (with headroom bars to the 100 % mark) and HTML
(the CSV is :mod:`core.planning.report_csv`).

Both documents are drawn from one list of sections (:func:`sections`), built from
:func:`core.planning.report.plan_to_dict` and the message catalog, so they carry the same content as
the Plan page: provenance (date, tool version, restoring link), the inputs in words, the verdict and
operating point, the checks, the fixes in their groups, the setup's limits and the cheapest catalog
GPUs, the cost, the best deployment when it was searched, and the launch command with its log.
Both are drawn by the one renderer (:mod:`core.report.render`); the checks' bars live in
:mod:`core.report.checks` (their names stay importable from here).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.energy.report import energy_section
from core.estimate.provenance import header_lines
from core.messages import message
from core.planning.answer import cost_sentence, operating_point, price_text, queue_sentence
from core.planning.check import Plan
from core.planning.fixes import Fix
from core.planning.report import fix_groups, headroom_line
from core.report import render
from core.report.blocks import Block, Section
from core.report.checks import BAR_SCALE, STATUS_COLORS, _bar, checks_html
from core.report.money import Price, Rate, catalog_price, default_rate, price_from_dict, price_section, priced
from core.spec.catalog import load_catalog

__all__ = ["BAR_SCALE", "STATUS_COLORS", "_bar", "checks_html", "html_report", "markdown_report", "sections"]


def sections(data: dict[str, Any], plan: Plan, fixes: list[Fix], lang: str = "en") -> list[tuple[str, list[Block]]]:
    """The report's sections in page order, as (title, blocks); the first has the document's title."""
    t = lambda key, **kw: message(key, lang, **kw)  # noqa: E731
    inputs = tuple(f"{row['label']}: {row['value']}" for row in data["inputs"])
    top = [Block("p", tuple(header_lines(data["report"], lang))), Block("strong", (data["summary"],))]
    top.append(
        Block("p", (t("plan.in_flight_line", in_flight=f"{plan.in_flight:,.1f}", worst=plan.worst_case_in_flight),))
    )
    top.append(Block("p", tuple(filter(None, (queue_sentence(plan, lang), operating_point(plan, lang))))))
    out = [(t("plan.report_title"), top), (t("plan.inputs"), [Block("list", inputs)])]
    out.append((t("plan.checks"), [Block("checks", tuple(plan.checks)), Block("p", (t("plan.bar_legend"),))]))
    fix_blocks = []
    if not fixes:
        fix_blocks.append(Block("p", (t("plan.no_fixes") if plan.verdict != "feasible" else t("plan.no_fix_needed"),)))
    for group, members in fix_groups(fixes):
        fix_blocks.append(Block("strong", (t(f"plan.fix_group_{group}"),)))
        fix_blocks.append(
            Block(
                "list",
                tuple(
                    f"{f.lever.text(lang)}: {f.num_gpus} GPU · {_fix_price(data, f, lang)} · "
                    f"{headroom_line(f.plan.binding, lang)}" + (f" — {f.caveat.text(lang)}" if f.caveat else "")
                    for f in members
                ),
            )
        )
    out.append((t("plan.fixes_title"), fix_blocks))
    if solvers := data.get("solvers"):
        out.append((t("plan.solvers"), _solver_blocks(data, solvers, lang)))
    if c := data["cost"]:
        out.append((t("plan.cost"), [Block("p", (cost_sentence(c, lang), *_cost_cny(data, c, lang)))]))
    if data.get("price"):  # the price the plan is costed at, its source and the exchange rate
        price, rate = price_from_dict(data["price"])
        out.append(price_section(price, lang, rate))
    if found := data.get("search"):
        out.append((t("report.best_title"), _search_blocks(data, found, lang)))
    launch = data["launch"]
    out.append(
        (
            t("plan.command"),
            [
                Block("code", (launch["command"],)),
                Block("p", (t("plan.expected_log"),)),
                Block("code", tuple(launch["expected_log"])),
            ],
        )
    )
    return out


def _rate(data: dict[str, Any]) -> Rate:
    return price_from_dict(data["price"])[1] if data.get("price") else default_rate()


def _priced(data: dict[str, Any], row: dict[str, Any], lang: str) -> str:
    """A row's cost per hour with its price's source: the user's price where the row is priced at it,
    else the catalog's provider and date (CNY first in Chinese)."""
    per_hour, gpus = row["cost_per_hour"], {g.id: g for g in load_catalog().gpus}
    if per_hour is None:
        return price_text(None, lang)
    own = price_from_dict(data["price"])[0] if data.get("price") else None
    if own and own.entered and abs(per_hour / row["num_gpus"] - own.usd_per_gpu_hour) < 1e-9:
        source = own
    else:
        source = catalog_price(gpus[row["gpu"]]) if row["gpu"] in gpus else Price(per_hour)
    return priced(per_hour, source, lang, _rate(data))


def _cost_cny(data: dict[str, Any], c: dict[str, Any], lang: str) -> tuple[str, ...]:
    """In Chinese, the cost again in CNY at the plan's rate (English keeps USD)."""
    if lang != "zh":
        return ()
    rate = _rate(data).cny_per_usd
    million = c["per_million_output_tokens_usd"]
    per_million = "∞" if million is None else f"{million * rate:,.3f}"
    per_hour = f"{c['per_hour_usd'] * rate:,.2f}"
    return (message("prices.cost_cny", lang, per_hour=per_hour, per_million=per_million, rate=f"{rate:g}"),)


def _fix_price(data: dict[str, Any], f: Fix, lang: str) -> str:
    row = {"gpu": f.plan.deployment.gpu.id, "cost_per_hour": f.cost_per_hour, "num_gpus": f.num_gpus}
    return _priced(data, row, lang)


def _solver_blocks(data: dict[str, Any], solvers: dict[str, Any], lang: str) -> list[Block]:
    t = lambda key, **kw: message(key, lang, **kw)  # noqa: E731
    sizing = solvers["min_gpus"]
    fewest = (
        t("plan.min_gpus_value", gpus=sizing["num_gpus"], replicas=sizing["replicas"], tp=sizing["tp"])
        if sizing
        else t("plan.none")
    )
    limits = (
        f"{t('plan.max_users')}: {solvers['max_load']:,.4g}" if solvers["max_load"] > 0 else t("plan.none"),
        f"{t('plan.max_prompt')}: {solvers['max_prompt_len']:,}" if solvers["max_prompt_len"] > 0 else t("plan.none"),
        f"{t('plan.min_gpus')}: {fewest}",
    )
    blocks = [Block("list", limits)]
    if options := solvers["cheapest_gpus"]:
        rows = tuple(
            (
                o["gpu_name"],
                str(o["num_gpus"]),
                f"{o['replicas']} × tp {o['tp']}",
                _priced(data, o, lang),
                t(f"status.{'ok' if o['verdict'] == 'feasible' else 'marginal'}"),
            )
            for o in options
        )
        header = ("GPU", "GPUs", t("plan.layout"), t("prices.per_hour_header"), t("plan.status"))
        blocks += [
            Block("strong", (t("plan.cheapest"),)),
            Block("table", rows, header),
            Block("p", (t("plan.cheapest_caption"),)),
        ]
    return blocks


def _search_blocks(data: dict[str, Any], found: dict[str, Any], lang: str) -> list[Block]:
    line = message(
        "report.best_line",
        lang,
        candidates=f"{found['candidates_evaluated']:,}",
        modes=", ".join(found["modes_evaluated"]),
        meeting=f"{found['meeting_slo']:,}",
    )
    header = (
        "GPU",
        "GPUs",
        "tp × pp (× dp)",
        "mode",
        "weights / KV",
        message("prices.per_hour_header", lang),
        "USD/1M",
        "TTFT ms",
        "TPOT ms",
        "SLO",
    )
    rows = tuple(
        (
            p["gpu"],
            str(p["num_gpus"]),
            f"{p['tp']} × {p['pp']}" + (f" × dp {p['dp']}" if p.get("dp", 1) > 1 else ""),
            p["mode"]
            if p["prefill_instances"] is None
            else f"{p['mode']} {p['prefill_instances']}P{p['decode_instances']}D",
            f"{p['weight_dtype']} / {p['kv_dtype']}",
            _priced(data, p, lang),
            message("plan.no_catalog_price", lang)
            if p["cost_per_million_output_tokens"] is None
            else f"{p['cost_per_million_output_tokens']:,.3f}",
            f"{p['ttft_ms']:,.0f}" if p["ttft_ms"] is not None else "∞",
            f"{p['tpot_ms']:,.1f}" if p["tpot_ms"] is not None else "∞",
            "✓" if p["meets_slo"] else "✗",
        )
        for p in found["pareto"]
    )
    return [Block("p", (line,)), Block("table", rows, header)]


def _document(
    data: dict[str, Any], plan: Plan, fixes: list[Fix], lang: str, extra_sections: Sequence[Section]
) -> tuple[str, list[Section]]:
    """The title and the sections under it: the page's, energy and power (from ``data["energy"]``), then
    ``extra_sections`` (deployment files, the benchmark command: any ``(title, [Block])``)."""
    (title, top), *rest = sections(data, plan, fixes, lang)
    return title, [("", top), *rest, energy_section(data, lang), *extra_sections]


def markdown_report(
    data: dict[str, Any], plan: Plan, fixes: list[Fix], lang: str = "en", extra_sections: Sequence[Section] = ()
) -> str:
    """One page for an email or a ticket, with every section of the Plan page (module docstring)."""
    return render.markdown(*_document(data, plan, fixes, lang, extra_sections), lang)


def html_report(
    data: dict[str, Any], plan: Plan, fixes: list[Fix], lang: str = "en", extra_sections: Sequence[Section] = ()
) -> str:
    """The Markdown report's sections as a self-contained HTML page with headroom bars."""
    return render.html(*_document(data, plan, fixes, lang, extra_sections), lang)
