"""The benchmark that checks a plan, and its result read back: the command that reproduces the
planned load with its predictions (:mod:`commands`), a result file of vllm bench serve, guidellm or
aiperf read into one record (:mod:`result_files`), and predicted against measured with a
calibration fitted to it (:mod:`compare`)."""

__all__ = ["commands", "compare", "report", "result_files"]
