"""Cached seams between pages and core: sweeps are recomputed only when their inputs change."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.estimate.sweep import Sweep, max_concurrency_by_length, sweep
from core.planning.requirement import Requirement
from core.spec.deployment import Deployment

FAST_HASH = {Deployment: hash, Requirement: hash}
"""Cache keys from the frozen dataclasses' own hash (a few µs) instead of Streamlit's recursive
hashing of every field (about 5 ms a call for a Deployment, most of a cached rerun's cost)."""
BATCHES = np.arange(1, 1025)
REFERENCE_PROMPTS = (512, 2048, 8192, 32768)
CURVE_POINTS = 64
SHORTEST_CURVE_LENGTH = 256


def sweep_lengths(current: int, longest: int) -> tuple[int, ...]:
    """The current prompt length plus reference lengths that fit under ``longest``."""
    return tuple(sorted({current, *(n for n in REFERENCE_PROMPTS if n <= longest)}))


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=FAST_HASH)
def batch_sweep(dep: Deployment, prompt_lens: tuple[int, ...], output_len: int) -> Sweep:
    return sweep(dep, BATCHES, np.array(prompt_lens), output_len)


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=FAST_HASH)
def concurrency_by_length(dep: Deployment) -> tuple[np.ndarray, np.ndarray]:
    """Max concurrent requests for request lengths from 256 tokens to max_model_len."""
    longest = max(dep.max_model_len, SHORTEST_CURVE_LENGTH + 1)
    lengths = np.unique(np.geomspace(SHORTEST_CURVE_LENGTH, longest, CURVE_POINTS).round())
    return lengths, max_concurrency_by_length(dep, lengths)
