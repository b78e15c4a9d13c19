"""Predictions against measurements: the public validation set, log and benchmark parsers,
calibration from a user's own logs, error bands, and the sensitivity tornado."""

__all__ = [
    "calibrate",  # Calibration, calibrate_memory, calibrate_speed
    "dataset",  # rows, predict, compare_all, summary
    "log_parse",  # vLLM start-up logs and bench serve output
    "sensitivity",  # one-at-a-time swings
    "uncertainty",  # error bands
]
