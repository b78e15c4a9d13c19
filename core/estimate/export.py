"""The Explorer's view as files to keep or share: Markdown, self-contained HTML, JSON and CSV.

Each carries when it was made, by which release of the tool, the link that reopens the view and
the inputs in plain words (:mod:`core.estimate.provenance`), then the sections of
:mod:`core.estimate.export_sections`, the GPU-hour price with its source and the exchange rate
(:mod:`core.report.money`) and any extra sections. Markdown and HTML are drawn by the one renderer
(:mod:`core.report.render`); the JSON and CSV list the same. The JSON's ``estimate`` block is
:func:`core.estimate.report.estimate_to_dict` unchanged, and every figure the other documents print
is read from it.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.energy.power import EnergyInputs
from core.energy.report import energy_section
from core.estimate.advice import Suggestion, fit_suggestions
from core.estimate.answer import estimate_answer
from core.estimate.export_sections import Quantity, Section, export_sections
from core.estimate.likely import gpu_class_of, likely_bands
from core.estimate.provenance import deployment_inputs, header_lines, provenance, workload_inputs
from core.estimate.report import estimate_to_dict
from core.estimate.result import Estimate
from core.messages import message
from core.report import render
from core.report.blocks import Block
from core.report.blocks import Section as DocSection
from core.report.money import Price, Rate, catalog_price, default_rate, price_rows, price_section, price_to_dict
from core.timing.kernel_speed import kernel_speed

FILE_STEM = "llm-estimate"
MIME_TYPES = {"md": "text/markdown", "html": "text/html", "json": "application/json", "csv": "text/csv"}


@dataclass(frozen=True)
class ExportDocument:
    """One estimate with everything its files print, gathered once for all four formats."""

    lang: str
    report: dict[str, Any]
    """:func:`core.estimate.provenance.provenance`: date, tool version, link."""
    deployment: tuple[tuple[str, str], ...]
    workload: tuple[tuple[str, str], ...]
    data: dict[str, Any]
    """:func:`estimate_to_dict` of the estimate."""
    ranges: dict[str, Any] | None
    suggestions: tuple[dict[str, Any], ...]
    sections: tuple[Section, ...]
    answer: str = ""
    """The page's answer sentence (:func:`core.estimate.answer.estimate_answer`), first in every file."""
    price: Price | None = None
    """The GPU-hour price the files list with its source (the Explorer has no price input: the catalog's)."""
    rate: Rate | None = None
    """USD -> CNY for the Chinese files (:mod:`core.report.money`)."""
    extra_sections: tuple[DocSection, ...] = ()
    """Sections appended after the Explorer's (deployment files, the benchmark command, energy), as
    ``(title, [Block])``: drawn in the Markdown and HTML, listed in the JSON and CSV."""


def likely_ranges(e: Estimate) -> dict[str, Any] | None:
    """The validation set's factor bands of the estimate's kernel tier (value / k to value x k,
    :func:`core.estimate.likely.likely_bands`) around TTFT (the burst's median), TPOT [ms] and output
    tokens/s, as the Explorer shows them: all three, or None when a metric has too few validation rows."""
    bands = likely_bands(e)
    if bands is None:
        return None
    ranges: dict[str, Any] = {"gpu_class": gpu_class_of(e), "tier": kernel_speed(e.deployment).tier}
    for key, b in bands.items():
        # four significant figures: an end is no more precise than its factor, and a small one stays > 0
        low, high = (float(f"{end:.4g}") for end in (b.low, b.high))
        factor = round(b.factor, 4)
        ranges[key] = {
            "low": low,
            "high": high,
            "factor": factor,
            "rows": b.rows,
            "tier": b.tier,
            "gpu_class": b.gpu_class,
        }
    return ranges


def suggestions_to_dicts(suggestions: list[Suggestion], lang: str = "en") -> list[dict[str, Any]]:
    """Each single change that makes it fit (:func:`core.estimate.advice.fit_suggestions`) with the
    headline numbers after it, read from that estimate's :func:`estimate_to_dict`."""
    found = []
    for s in suggestions:
        after = estimate_to_dict(s.result)
        found.append(
            {
                "code": s.notice.code,
                "change": s.notice.text(lang),
                "max_concurrency_at_request_len": after["kv"]["max_concurrency_at_request_len"],
                "ttft_ms": after["latency"]["ttft_ms"],
                "tpot_ms": after["latency"]["tpot_ms"],
                "output_tokens_per_s": after["throughput"]["output_tokens_per_s"],
            }
        )
    return found


def export_document(
    e: Estimate,
    link: str | None = None,
    lang: str = "en",
    suggestions: list[Suggestion] | None = None,
    extra_sections: Sequence[DocSection] = (),
    price: Price | None = None,
    rate: Rate | None = None,
    energy: EnergyInputs | None = None,
) -> ExportDocument:
    """Gather what the four files print; ``suggestions`` are the page's own
    :func:`fit_suggestions` (computed here when not given and the scenario does not fit or start);
    ``extra_sections`` come after the Explorer's in every file; ``price`` is the catalog's of the GPU
    unless given (a price the user typed), ``rate`` the reference USD -> CNY rate unless given, ``energy``
    the electricity price and PUE (the defaults unless given)."""
    if suggestions is None:
        needed = not (e.fits and e.engine_starts)
        suggestions = fit_suggestions(e.deployment, e.workload, e) if needed else []
    data = estimate_to_dict(e, energy)
    ranges = likely_ranges(e)
    suggested = suggestions_to_dicts(suggestions, lang)
    return ExportDocument(
        lang=lang,
        report=provenance(link),
        deployment=tuple(deployment_inputs(e.deployment, lang)),
        workload=tuple(workload_inputs(e.workload, lang)),
        data=data,
        ranges=ranges,
        suggestions=tuple(suggested),
        sections=export_sections(e, data, ranges, suggested, lang),
        answer=estimate_answer(e, suggestions, lang, rate),
        price=price or catalog_price(e.deployment.gpu),
        rate=rate or default_rate(),
        extra_sections=tuple(extra_sections),
    )


def _number(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _shown(q: Quantity, lang: str) -> tuple[str, str]:
    """(value, unit) as a reader sees them."""
    unit = {"requests": message("export.unit_requests", lang), "x": "×"}.get(q.unit, q.unit)
    return (q.text if q.text is not None else _number(q.value)), unit


def document_sections(doc: ExportDocument) -> list[DocSection]:
    """The document's sections as blocks for :mod:`core.report.render`: provenance and the answer,
    the inputs, each section's sentences (a list) and quantities (a table of label, value, unit), then
    the extra sections."""
    t = lambda key, **kw: message(key, doc.lang, **kw)  # noqa: E731
    pairs = tuple(t("export.pair", label=label, value=value) for label, value in (*doc.deployment, *doc.workload))
    out: list[DocSection] = [
        ("", [Block("p", tuple(header_lines(doc.report, doc.lang))), Block("strong", (doc.answer,))]),
        (t("report.inputs"), [Block("list", pairs)]),
    ]
    header = (t("export.quantity"), t("export.value"), t("export.unit"))
    for section in doc.sections:
        blocks = [Block("list", tuple(text for _, text in section.notes))] if section.notes else []
        if section.quantities:
            rows = tuple((q.label, *_shown(q, doc.lang)) for q in section.quantities)
            blocks.append(Block("table", rows, header))
        out.append((section.title, blocks))
    out.append(energy_section(doc.data, doc.lang))  # board power and the electricity bill (core.energy)
    if doc.price is not None:
        out.append(price_section(doc.price, doc.lang, doc.rate))
    return [*out, *doc.extra_sections]


def _markdown(doc: ExportDocument) -> str:
    return render.markdown(message("export.title", doc.lang), document_sections(doc), doc.lang)


def _html(doc: ExportDocument) -> str:
    return render.html(message("export.title", doc.lang), document_sections(doc), doc.lang)


def _json(doc: ExportDocument) -> str:
    verdict = next(text for s in doc.sections if s.name == "verdict" for name, text in s.notes if name == "verdict")
    document = {
        "report": {**doc.report, "language": doc.lang},
        "inputs": {
            "deployment": [{"label": label, "value": value} for label, value in doc.deployment],
            "workload": [{"label": label, "value": value} for label, value in doc.workload],
        },
        "verdict": verdict,
        "answer": doc.answer,
        "estimate": doc.data,
        "likely_ranges": doc.ranges,
        "fit_suggestions": list(doc.suggestions),
        "warnings": [text for s in doc.sections if s.name == "warnings" for name, text in s.notes if name != "none"],
    }
    if doc.price is not None:
        document["price"] = price_to_dict(doc.price, doc.rate)
    if doc.extra_sections:
        document["sections"] = render.to_data(doc.extra_sections)
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _csv_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else value


def _csv(doc: ExportDocument) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["section", "name", "value", "unit"])
    writer.writerows(("report", key, _csv_value(value), "") for key, value in doc.report.items())
    writer.writerow(["report", "language", doc.lang, ""])
    writer.writerows(("inputs", label, value, "") for label, value in (*doc.deployment, *doc.workload))
    for section in doc.sections:
        writer.writerows((section.name, name, text, "") for name, text in section.notes)
        writer.writerows((section.name, q.name, _csv_value(q.value), q.unit) for q in section.quantities)
    if doc.price is not None:
        writer.writerows(("price", key, _csv_value(value), "") for key, value in price_rows(doc.price, doc.rate))
    writer.writerows(("extra", title, text, "") for title, text in render.to_rows(doc.extra_sections))
    return buffer.getvalue()


RENDERERS = {"md": _markdown, "html": _html, "json": _json, "csv": _csv}


def export_files(
    e: Estimate, link: str | None = None, lang: str = "en", suggestions: list[Suggestion] | None = None
) -> dict[str, str]:
    """The four documents for ``e``, keyed by file extension ("md", "html", "json", "csv")."""
    doc = export_document(e, link, lang, suggestions)
    return {ext: render(doc) for ext, render in RENDERERS.items()}


def markdown_report(e: Estimate, link: str | None = None, lang: str = "en") -> str:
    """The Explorer's view as Markdown: provenance, inputs, then a table or sentences per section."""
    return _markdown(export_document(e, link, lang))


def html_report(e: Estimate, link: str | None = None, lang: str = "en") -> str:
    """The Markdown report's content as one self-contained HTML page, every text escaped."""
    return _html(export_document(e, link, lang))


def json_report(e: Estimate, link: str | None = None, lang: str = "en") -> str:
    """Provenance, inputs, verdict, ``estimate_to_dict`` unchanged, ranges, suggestions and warnings."""
    return _json(export_document(e, link, lang))


def csv_report(e: Estimate, link: str | None = None, lang: str = "en") -> str:
    """One row per quantity (section, name, value, unit), sentences as rows of their section."""
    return _csv(export_document(e, link, lang))
