"""Step GPU times from NVIDIA AIConfigurator (``aiconfigurator-core``), tabled once per deployment.

Only :mod:`core.timing.aic_backend` uses this module, and only when a deployment asks for the
``aic`` backend; it is the one place that imports aiconfigurator (lazily, inside :meth:`AicTables.build`).
The model is compiled with ``EngineHandle.compile`` (the package's stable facade) for the system,
engine and version, tp (MoE split tp-wise) and the GEMM and KV formats, and four tables are read off it
on powers-of-two grids [s]:

    D(B, C)       = decode_step_latency(B, isl=C, osl=1): a decode step of B sequences at C cached tokens
                    (every kernel: GEMMs, attention, MoE, element-wise, all-reduce)
    A_dec(B, C)   = the ``generation_attention`` part of that step (decode_step_per_op)
    G(T)          = a context step of T tokens without its attention: run_static_per_op's context ops
                    at batch 1, isl T, minus ``context_attention``
    A_ctx(n, c)   = ``context_attention`` of one prompt chunk of n new tokens on c cached ones
                    (run_static_per_op at batch 1, isl n + c, prefix c)

Between grid points each table is linear in its shapes (bilinear in two; exact for the parts that are
affine in them, such as attention against C), and beyond the ends it continues the last segment (decode
and prefill time grow about linearly with B, C and T there), so a sweep or a 10,000-request simulation
reads the tables and never calls AIConfigurator again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

BATCH = tuple(2**i for i in range(13))  # decode sequences 1 .. 4096
DECODE_CONTEXT = tuple(2**i for i in range(19))  # 1 .. 262,144 cached tokens
STEP_TOKENS = tuple(2**i for i in range(19))  # 1 .. 262,144 tokens in a step
CHUNK = tuple(2**i for i in range(17))  # 1 .. 65,536 new tokens of one prompt
CHUNK_CACHED = (0, *(4**i for i in range(2, 10)))  # 0, 16 .. 262,144 cached tokens (A_ctx is affine in c)


def _segment(x: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of the grid segment each x falls in (the first or last beyond the ends) and the weight
    of its upper end (outside [0, 1] beyond the ends: the segment continued)."""
    i = np.minimum(np.maximum(np.searchsorted(grid, x, side="right") - 1, 0), grid.size - 2)  # ufuncs: no clip wrapper
    return i, (x - grid[i]) / (grid[i + 1] - grid[i])


def interp1(x, grid: np.ndarray, y: np.ndarray) -> np.ndarray:
    """y interpolated linearly at x on ``grid``, continued beyond the ends."""
    x = np.asarray(x, dtype=float)
    i, w = _segment(x, grid)
    return y[i] + w * (y[i + 1] - y[i])


def interp2(x, z, grid_x: np.ndarray, grid_z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Bilinear :func:`interp1` on a table ``y[i, j]`` over ``grid_x`` x ``grid_z``."""
    x, z = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(z, dtype=float))
    i, wx = _segment(x, grid_x)
    j, wz = _segment(z, grid_z)
    low = y[i, j] + wz * (y[i, j + 1] - y[i, j])
    high = y[i + 1, j] + wz * (y[i + 1, j + 1] - y[i + 1, j])
    return low + wx * (high - low)


@dataclass(frozen=True)
class AicTables:
    """One compiled deployment's step tables (module docstring) [s] on the grids above."""

    decode: np.ndarray  # D[B, C]
    decode_attention: np.ndarray  # A_dec[B, C]
    linear: np.ndarray  # G[T]
    prefill_attention: np.ndarray  # A_ctx[n, c] / n: per new token, about affine in n and c (bilinear reads it exactly)

    @staticmethod
    def build(model_id: str, system: str, backend: str, version: str, **compile_args) -> AicTables:
        """Compile the model in AIConfigurator and read the four tables (about 500 calls of a few ms)."""
        from aiconfigurator_core.sdk import EngineHandle

        log = logging.getLogger("aiconfigurator_core")
        level = log.level
        log.setLevel(logging.ERROR)  # its notices of back-filled rows, printed at every table load
        try:
            handle = EngineHandle.compile(model_id, system, backend, backend_version=version, **compile_args)
            return AicTables._read(handle)
        finally:
            log.setLevel(level)

    @staticmethod
    def _read(handle) -> AicTables:
        decode = np.empty((len(BATCH), len(DECODE_CONTEXT)))
        decode_attention = np.empty_like(decode)
        for i, b in enumerate(BATCH):
            for j, c in enumerate(DECODE_CONTEXT):
                ops = handle.decode_step_per_op(b, c, 1)
                decode[i, j] = sum(op[1] for op in ops) / 1e3
                decode_attention[i, j] = sum(op[1] for op in ops if op[0].endswith("attention")) / 1e3
        linear = np.empty(len(STEP_TOKENS))
        for k, t in enumerate(STEP_TOKENS):
            context, _ = handle.run_static_per_op(batch_size=1, isl=t, osl=1, prefix=0)
            linear[k] = sum(op[1] for op in context if not op[0].endswith("attention")) / 1e3
        prefill_attention = np.empty((len(CHUNK), len(CHUNK_CACHED)))
        for i, n in enumerate(CHUNK):
            for j, c in enumerate(CHUNK_CACHED):
                context, _ = handle.run_static_per_op(batch_size=1, isl=n + c, osl=1, prefix=c)
                prefill_attention[i, j] = sum(op[1] for op in context if op[0].endswith("attention")) / 1e3 / n
        return AicTables(decode, decode_attention, linear, prefill_attention)

    def decode_s(self, batch, context) -> np.ndarray:
        """D(B, C): a decode step of B sequences on C cached tokens each [s]."""
        return interp2(_at_least_1(batch), _at_least_1(context), GRID_BATCH, GRID_CONTEXT, self.decode)

    def decode_attention_s(self, batch, context) -> np.ndarray:
        """A_dec(B, C): that step's attention [s]."""
        return interp2(_at_least_1(batch), _at_least_1(context), GRID_BATCH, GRID_CONTEXT, self.decode_attention)

    def linear_s(self, tokens) -> np.ndarray:
        """G(T): everything but attention in a step of T tokens [s]."""
        return interp1(_at_least_1(tokens), GRID_TOKENS, self.linear)

    def prefill_attention_s(self, new, cached) -> np.ndarray:
        """A_ctx(n, c): attention of one prompt chunk of n new tokens on c cached ones [s]."""
        cached = np.maximum(np.asarray(cached, dtype=float), 0.0)
        new = _at_least_1(new)
        return new * interp2(new, cached, GRID_CHUNK, GRID_CHUNK_CACHED, self.prefill_attention)


def _at_least_1(values) -> np.ndarray:
    return np.maximum(np.asarray(values, dtype=float), 1.0)


GRID_BATCH, GRID_CONTEXT, GRID_TOKENS, GRID_CHUNK, GRID_CHUNK_CACHED = (
    np.array(grid, dtype=float) for grid in (BATCH, DECODE_CONTEXT, STEP_TOKENS, CHUNK, CHUNK_CACHED)
)
