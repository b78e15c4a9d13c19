"""Choose the default efficiency factors per GPU memory class on the fit half of the validation set.

The rule (also in docs/accuracy.md): for each class (HBM, GDDR) take the serving rows of the fit
half (CRC32 of the row id even), try every combination on the grid below, and keep the one with
the lowest median absolute percentage error over TTFT, TPOT and output throughput; then, with
those, the request overhead (API server and tokenization before the engine) on its own grid. A class with
fewer than MIN_ROWS fit rows takes the fit over all GPUs. The result goes into
core/spec/engine.py (CLASS_EFFICIENCY) by hand, with the date; the check half then measures it.

Run: .venv/bin/python bench/fit_defaults.py
"""

from __future__ import annotations

import dataclasses
import itertools

from core.spec import units
from core.spec.catalog import load_catalog
from core.spec.engine import Efficiency
from core.validation.dataset import fit_efficiency, load_rows

COMPUTE = (0.3, 0.4, 0.5, 0.6, 0.7)
BANDWIDTH = (0.5, 0.6, 0.7, 0.8, 0.9)
PER_SEQUENCE_US = (0.0, 25.0, 50.0, 100.0, 200.0, 400.0)
REQUEST_OVERHEAD_MS = (0.0, 10.0, 20.0, 40.0, 80.0)
MIN_ROWS = 5


def main() -> None:
    catalog = load_catalog()
    serving = [r for r in load_rows() if r.get("kind") != "startup_log" and r.fit_half]
    grid = [
        Efficiency(compute=c, bandwidth=b, per_sequence_overhead_s=s * units.US)
        for c, b, s in itertools.product(COMPUTE, BANDWIDTH, PER_SEQUENCE_US)
    ]
    for name, rows in (
        ("all", serving),
        *((cls, [r for r in serving if catalog.gpu(r.get("gpu")).memory_type == cls]) for cls in ("hbm", "gddr")),
    ):
        if len(rows) < MIN_ROWS:
            print(f"{name}: {len(rows)} fit rows, fewer than {MIN_ROWS}: use the fit over all GPUs")
            continue
        efficiency, _ = fit_efficiency(rows, grid)
        second = [dataclasses.replace(efficiency, request_overhead_s=ms * units.MS) for ms in REQUEST_OVERHEAD_MS]
        efficiency, score = fit_efficiency(rows, second)
        print(
            f"{name}: {len(rows)} fit rows; compute {efficiency.compute}, bandwidth {efficiency.bandwidth}, "
            f"per-sequence {efficiency.per_sequence_overhead_s / units.US:g} us, request overhead "
            f"{efficiency.request_overhead_s / units.MS:g} ms; median APE {score:.1%}"
        )


if __name__ == "__main__":
    main()
