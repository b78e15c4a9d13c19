"""Requirement presets (data/presets.toml): real-time chat, nightly batch documents, high-concurrency API."""

from __future__ import annotations

import functools
import tomllib

from core.planning.requirement import Requirement
from core.spec import units
from core.spec.catalog import DATA_DIR

PRESETS_PATH = DATA_DIR / "presets.toml"
MS_FIELDS = {"ttft_slo_ms": "ttft_slo_s", "tpot_slo_ms": "tpot_slo_s"}


@functools.cache
def load_presets() -> dict[str, Requirement]:
    with PRESETS_PATH.open("rb") as fh:
        raw = tomllib.load(fh)
    presets = {}
    for name, fields in raw.items():
        values = {MS_FIELDS.get(k, k): (v * units.MS if k in MS_FIELDS else v) for k, v in fields.items()}
        presets[name] = Requirement(**values)
    return presets
