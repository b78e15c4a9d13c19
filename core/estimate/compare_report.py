"""The Compare page's table as a document to share: Markdown, HTML, CSV and JSON.

Each carries the provenance (date, tool version and the link that reopens the view,
:mod:`core.estimate.provenance`), the table exactly as the page shows it (metric rows of display
strings, one column per scenario), each scenario's one-line label, and every scenario's inputs in
plain words side by side. The JSON adds each scenario's figures as numbers (ms, GiB, tokens/s).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.estimate.provenance import deployment_inputs, header_lines, provenance, workload_inputs
from core.estimate.result import Estimate
from core.messages import message
from core.report import render
from core.report.blocks import Block, Section
from core.report.money import Rate, catalog_price, default_rate, price_to_dict, priced, rate_line
from core.spec import units

Table = Sequence[tuple[str, Sequence[str]]]
"""(metric label, its display value in each scenario's column), as the page shows them."""


@dataclass(frozen=True)
class Compared:
    """One column of the comparison: its name ("#1"), the page's one-line label and its estimate."""

    name: str
    label: str
    result: Estimate


def inputs(column: Compared, lang: str = "en") -> list[tuple[str, str]]:
    """A scenario's setup and workload as (label, value) pairs in plain words."""
    return deployment_inputs(column.result.deployment, lang) + workload_inputs(column.result.workload, lang)


def input_rows(columns: Sequence[Compared], lang: str = "en") -> list[tuple[str, list[str]]]:
    """Every input label any scenario has, in the order they first appear, with each scenario's
    value; a scenario without that row (an engine flag left to the engine) reads "engine default"."""
    per_column = [dict(inputs(c, lang)) for c in columns]
    labels = list(dict.fromkeys(label for values in per_column for label in values))
    default = message("compare.report_default", lang)
    return [(label, [values.get(label, default) for values in per_column]) for label in labels]


def priced_input_rows(columns: Sequence[Compared], lang: str = "en", rate: Rate | None = None) -> list:
    """:func:`input_rows` with each scenario's GPU-hour price and its source (the catalog's: a scenario
    has no price input) and the exchange rate the Chinese amounts use."""
    rate = rate or default_rate()
    label = f"{message('prices.section', lang)} ({message('prices.per_gpu_hour', lang)})"
    own = [catalog_price(c.result.deployment.gpu) for c in columns]
    prices = [priced(p.usd_per_gpu_hour, p, lang, rate) for p in own]
    rates = [rate_line(rate, lang)] * len(columns)
    return [*input_rows(columns, lang), (label, prices), (message("prices.rate_label", lang), rates)]


def figures(e: Estimate) -> dict[str, Any]:
    """The numbers behind one column of the table (per GPU where it says so)."""
    return {
        "fits": bool(e.fits),
        "weights_per_gpu_gib": round(float(e.memory.weights) / units.GiB, 3),
        "kv_budget_per_gpu_gib": round(float(e.memory.kv_budget) / units.GiB, 3),
        "kv_capacity_tokens": int(e.kv.capacity_tokens),
        "max_concurrency": int(e.kv.max_concurrency_at_request_len),
        "ttft_ms": round(e.latency.ttft_s / units.MS, 3),
        "tpot_ms": round(e.latency.tpot_s / units.MS, 3),
        "e2e_ms": round(e.latency.e2e_s / units.MS, 3),
        "output_tokens_per_s": round(e.throughput.output_tokens_per_s, 2),
        "decode_bound": e.bound_decode,
    }


def compare_to_dict(
    report: dict[str, Any], columns: Sequence[Compared], table: Table, lang: str = "en", rate: Rate | None = None
) -> dict:
    """The JSON export: provenance, the table as shown, and per scenario its label, inputs, figures
    and price (:func:`core.report.money.price_to_dict`)."""
    return {
        "report": report,
        "columns": [c.name for c in columns],
        "table": [{"metric": label, "values": list(values)} for label, values in table],
        "scenarios": [
            {
                "name": c.name,
                "label": c.label,
                "inputs": [{"label": label, "value": value} for label, value in inputs(c, lang)],
                "figures": figures(c.result),
                "price": price_to_dict(catalog_price(c.result.deployment.gpu), rate),
            }
            for c in columns
        ],
    }


def json_report(
    report: dict[str, Any], columns: Sequence[Compared], table: Table, lang: str = "en", rate: Rate | None = None
) -> str:
    return json.dumps(compare_to_dict(report, columns, table, lang, rate), indent=2, ensure_ascii=False)


def sections(
    report: dict[str, Any],
    columns: Sequence[Compared],
    table: Table,
    lang: str = "en",
    extra_sections: Sequence[Section] = (),
    rate: Rate | None = None,
) -> list[Section]:
    """The document's sections as blocks (:mod:`core.report.render`): provenance, the table as shown
    with what each column is, the inputs side by side, then ``extra_sections``."""
    t = lambda key, **kw: message(key, lang, **kw)  # noqa: E731
    header = ("", *(c.name for c in columns))
    rows = lambda pairs: tuple((label, *values) for label, values in pairs)  # noqa: E731
    return [
        ("", [Block("p", (line,)) for line in header_lines(report, lang)]),  # a paragraph each, as before
        (
            t("compare.report_table"),
            [Block("table", rows(table), header), Block("list", tuple((c.name, c.label) for c in columns))],
        ),
        (t("report.inputs"), [Block("table", rows(priced_input_rows(columns, lang, rate)), header)]),
        *extra_sections,
    ]


def markdown_report(
    report: dict[str, Any], columns: Sequence[Compared], table: Table, lang: str = "en", rate: Rate | None = None
) -> str:
    """One page for an email or a ticket: provenance, the table, what each column is, the inputs."""
    doc = sections(report, columns, table, lang, rate=rate)
    return render.markdown(message("compare.report_title", lang), doc, lang)


def html_report(
    report: dict[str, Any], columns: Sequence[Compared], table: Table, lang: str = "en", rate: Rate | None = None
) -> str:
    """The Markdown report's content as one self-contained HTML page, every text escaped."""
    doc = sections(report, columns, table, lang, rate=rate)
    return render.html(message("compare.report_title", lang), doc, lang)


def csv_report(
    report: dict[str, Any], columns: Sequence[Compared], table: Table, lang: str = "en", rate: Rate | None = None
) -> str:
    """The provenance as key/value rows, then the table (a row of labels first) and the inputs,
    one column per scenario."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for key, value in report.items():
        writer.writerow([key, "" if value is None else value])
    names = [c.name for c in columns]
    writer.writerow([])
    writer.writerow(["", *names])
    writer.writerow([message("compare.report_scenario", lang), *(c.label for c in columns)])
    writer.writerows([label, *values] for label, values in table)
    writer.writerow([])
    writer.writerow([message("report.inputs", lang), *names])
    writer.writerows([label, *values] for label, values in priced_input_rows(columns, lang, rate))
    return buffer.getvalue()


def exports(
    link: str | None, columns: Sequence[Compared], table: Table, lang: str = "en", rate: Rate | None = None
) -> dict[str, str]:
    """The Markdown ("md"), HTML ("html"), CSV ("csv") and JSON ("json") documents, sharing one
    provenance (one date); Markdown and HTML are drawn by :mod:`core.report.render`."""
    report = provenance(link)
    return {
        "md": markdown_report(report, columns, table, lang, rate),
        "html": html_report(report, columns, table, lang, rate),
        "csv": csv_report(report, columns, table, lang, rate),
        "json": json_report(report, columns, table, lang, rate),
    }
