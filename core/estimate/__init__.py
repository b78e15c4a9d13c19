"""The static answer for one deployment and workload: memory, concurrency, TTFT, TPOT and
throughput (``result``), over grids (``sweep``), with each lever against itself turned off
(``whatif``), what would make it fit (``advice``), as JSON and text (``report``), and as files to share
(``export``)."""

__all__ = [
    "advice",  # fit_suggestions
    "answer",  # the Explorer's answer sentence: verdict, what binds, cheapest fix and price, figures to quote
    "compare_report",  # the Compare page's table, labels and inputs as Markdown, CSV and JSON exports
    "explain",  # every headline number's formula with this scenario's values (Explanation, explain)
    "explain_energy",  # the energy numbers' explanations (board power, J per token, cost)
    "explain_memory",  # the memory numbers' explanations
    "export",  # the Explorer's view as Markdown, HTML, JSON and CSV files
    "export_sections",  # those files' sections: Section, Quantity, export_sections
    "likely",  # likely ranges of the headline numbers by kernel tier (likely_bands, tier_band)
    "provenance",  # date, tool version, restoring link and plain-words inputs of every export
    "report",  # estimate_to_dict, format_estimate, model_to_dict, gpu_to_dict
    "result",  # Estimate, estimate
    "scope",  # the batch that runs; arriving together vs closed-loop clients
    "step_terms",  # one decode step's terms across batch sizes (Learn's chart)
    "sweep",  # batch x prompt-length grids
    "tradeoff",  # the three-way tradeoff scores
    "whatif",  # each lever's effect
    "whatif_report",  # its JSON and text
]
