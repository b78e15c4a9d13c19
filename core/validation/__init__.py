"""Predictions against measurements: the public validation set held out by source, log and benchmark parsers,
calibration from a user's own logs, error bands, and the sensitivity tornado."""

__all__ = [
    "calibrate",  # Calibration, calibrate_memory, calibrate_speed
    "dataset",  # rows, predict, compare_all, summary, source_summary
    "grouped",  # leave-one-source-out fit and predictions
    "log_parse",  # vLLM start-up logs and bench serve output
    "report",  # the stored report (data/validation/report.json)
    "sensitivity",  # one-at-a-time swings
    "uncertainty",  # error bands
]
