"""The benchmark check as a document section (:class:`core.report.blocks.Block`), for the Plan reports
and exports: each tool's command, the predictions with their likely range, and, once a result was
read back, predicted against measured. Text from the message catalog, in the report's language."""

from __future__ import annotations

from core.benchcheck.commands import TOOLS, BenchCheck, note_text
from core.benchcheck.compare import Comparison
from core.messages import message
from core.report.blocks import Block, Section

TOOL_NAMES = {"vllm": "vllm bench serve", "guidellm": "guidellm", "aiperf": "aiperf"}


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:,.4g}"


def benchmark_section(found: BenchCheck, lang: str = "en", comparison: Comparison | None = None) -> Section:
    """("Check this plan with a benchmark", blocks)."""
    blocks = [Block("p", (message("benchcheck.ui_caption", lang),))]
    for tool in TOOLS:
        blocks += [Block("strong", (TOOL_NAMES[tool],)), Block("code", (found.commands[tool],))]
    if found.notes:
        blocks.append(Block("list", tuple(note_text(note, lang) for note in found.notes)))
    if found.predicted is not None:
        tier = message(f"likely.tier_{found.predicted.tier.replace(' ', '_')}", lang)
        header = (
            message("benchcheck.ui_metric", lang),
            message("benchcheck.ui_predicted", lang),
            message("benchcheck.ui_likely", lang, tier=tier),
        )
        rows = []
        for metric, value in found.predicted.values.items():
            band = found.predicted.bands.get(metric)
            likely = "—" if band is None else f"{band[0]:,.4g} – {band[1]:,.4g}"
            rows.append((message(f"benchcheck.metric_{metric}", lang), _number(value), likely))
        blocks.append(Block("table", tuple(rows), header))
    if comparison is not None:
        yes, no = message("benchcheck.ui_yes", lang), message("benchcheck.ui_no", lang)
        header = tuple(
            message(f"benchcheck.ui_{key}", lang) for key in ("metric", "predicted", "measured", "ratio", "in_band")
        )
        rows = [
            (
                message(f"benchcheck.metric_{row.metric}", lang),
                _number(row.predicted),
                _number(row.measured),
                "—" if row.ratio is None else f"{row.ratio:.2f}",
                "—" if row.inside is None else (yes if row.inside else no),
            )
            for row in comparison.rows
        ]
        blocks.append(Block("table", tuple(rows), header))
    return message("benchcheck.ui_title", lang), blocks
