"""Analytic core of the LLM Inference Tradeoff Explorer.

Pure Python + numpy: memory per GPU, KV-cache concurrency ceiling and roofline latency and
throughput for serving a language model on a given accelerator. Never imports streamlit or plotly.
"""
