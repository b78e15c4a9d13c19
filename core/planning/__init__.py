"""Planning a deployment for a load: the requirement, the checks at its steady state and
the verdict, fixes, solvers (largest load, longest prompt, fewest GPUs, cheapest GPUs), money,
presets, the engine's launch command, reports, and the best-deployment search with its Pareto fronts."""

__all__ = [
    "answer",  # plan_answer, verdict_sentence, operating_point, queue_sentence, cost_sentence: the plan in words
    "check",  # Check, Plan, check
    "cost",  # Cost, cost, cost_per_hour
    "curves",  # Curves, curves: one search shape's operating curves, and its candidates' columns
    "disaggregated",  # the xPyD candidates of one search shape
    "explain",  # plan_explanations: the Plan's steady-state TTFT, TPOT, throughput and memory explained
    "fixes",  # Fix, fixes
    "launch",  # serve_command
    "pareto",  # front, cost_front, throughput_front, best, search_to_dict
    "presets",  # load_presets
    "report",  # plan_to_dict, the verdict sentence, the text report
    "report_csv",  # the CSV report
    "report_formats",  # Markdown and HTML reports
    "requirement",  # Requirement
    "search",  # Candidates, search (SearchSpace and MODES from shapes)
    "shapes",  # SearchSpace, shapes: the replica shapes the search evaluates
    "solve",  # max_users, max_prompt_len, min_gpus, gpu_options
]
