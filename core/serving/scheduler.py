"""The scheduler state of one simulated replica, and its named steps.

Per engine step (vLLM V1's order): :meth:`Engine.schedule_decodes` gives every decoding request
one token and the KV block it may need, preempting the newest request while they do not fit;
:meth:`Engine.continue_prefills` gives the remaining token budget to prompts already being
prefilled; :meth:`Engine.admit` admits waiting requests in arrival order while ``max_num_seqs``,
the token budget and the free blocks (less a watermark) allow; :meth:`Engine.advance` or
:meth:`Engine.advance_decodes` record what the step computed (a run of decode-only steps takes as
many as :meth:`Engine.decode_steps_that_fit` allows); :meth:`Engine.retire` frees the blocks of
finished requests (:meth:`Engine.finishing`). :meth:`Engine.preempt_newest` is the one preemption: vLLM's
recompute, which frees the victim's blocks and prefills its prompt and generated tokens again.

KV is counted in blocks (:class:`core.serving.step_cost.Blocks`); a request starts with the
prompt tokens found cached and the shared prefix's blocks, which are held once for all.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from core.serving.step_cost import FEW
from core.spec.deployment import Deployment

WATERMARK = 0.01
"""Share of KV blocks admissions leave free for running requests to grow: vLLM V0's
``CacheConfig``/``SchedulerConfig`` default (0.01). Kept for SGLang and TensorRT-LLM, whose schedulers
reserve room by other rules (SGLang's ``new_token_ratio``, TensorRT-LLM's capacity policy) not modelled."""
WATERMARK_V1 = 0.0
"""vLLM V1 (0.8+) admits into every free block: its scheduler has no watermark (vLLM 0.11.0's
v1/core/sched/scheduler.py; ``SchedulerConfig.watermark = 0.0`` in 0.34.0)."""


def watermark(dep: Deployment) -> float:
    """Share of KV blocks admissions leave free for the release of ``dep``'s engine."""
    return WATERMARK_V1 if dep.engine.release.vllm_v1 else WATERMARK


class Engine:
    """Which requests wait and run, what each has computed and holds, and the blocks in use."""

    def __init__(self, dep: Deployment, prompt, answer, blocks, capacity: int, hit, shared) -> None:
        count = len(prompt)
        self.prompt, self.answer, self.blocks, self.capacity = prompt, answer, blocks, capacity
        self.hit, self.shared = hit, shared
        self.token_budget, self.max_seqs = dep.batch_limits
        self.reserve = watermark(dep) * capacity  # blocks admissions leave free
        self.cached = np.zeros(count, dtype=np.int64)
        self.target = prompt.copy()  # tokens to prefill before decoding (prompt, plus output after a preemption)
        self.generated = np.zeros(count, dtype=np.int64)
        self.held = np.zeros(count)  # blocks each request holds
        self.first = np.full(count, np.nan)
        self.finish = np.full(count, np.nan)
        self.last_token = np.zeros(count)
        self.gaps: list[np.ndarray] = []
        self.waiting: deque[int] = deque()
        self.running: list[int] = []
        self.prefilling: list[int] = []  # running requests whose prompt is not all computed, in admission order
        self._running_ids: np.ndarray | None = None  # ``running`` as an array, built when it changes
        self.decoding_cached = np.zeros(0, dtype=np.int64)  # cached tokens of the decodes last scheduled
        self.used = float(shared.max())  # the shared prefix's blocks, held once
        self.preemptions = 0

    @property
    def in_system(self) -> int:
        return len(self.running) + len(self.waiting)

    @property
    def running_ids(self) -> np.ndarray:
        """The running requests in admission order, as an array."""
        if self._running_ids is None:
            self._running_ids = np.array(self.running, dtype=np.int64)
        return self._running_ids

    def preempt_newest(self) -> int:
        """Preempt the most recently admitted running request and queue it first again: its own
        blocks are freed (the shared prefix's stay) and it will prefill its prompt and all but its
        last generated token again (vLLM's recompute)."""
        victim = self.running.pop()
        self._running_ids = None
        if victim in self.prefilling:
            self.prefilling.remove(victim)
        self.used -= self.held[victim] - self.shared[victim]
        self.held[victim] = 0
        self.cached[victim] = 0
        self.target[victim] = self.prompt[victim] + max(self.generated[victim] - 1, 0)
        self.waiting.appendleft(victim)
        self.preemptions += 1
        return victim

    def schedule_decodes(self) -> tuple[np.ndarray, bool]:
        """One token for every decoding request (up to the token budget), with the blocks it needs;
        preempts the newest request until they fit. Returns the decoding requests and whether any
        request was preempted."""
        run = self.running_ids
        decoding = run[self.cached[run] >= self.target[run]] if self.prefilling else run
        cached = self.cached[decoding]
        grow = self.blocks(cached + 1) - self.held[decoding]
        needed = self._sum(grow)
        preempted = False
        while decoding.size and self.used + needed > self.capacity:
            preempted = True
            victim = self.preempt_newest()
            keep = decoding != victim
            decoding, grow, cached = decoding[keep], grow[keep], cached[keep]
            needed = self._sum(grow)
        if decoding.size > self.token_budget:
            decoding, grow, cached = (
                decoding[: self.token_budget],
                grow[: self.token_budget],
                cached[: self.token_budget],
            )
            needed = self._sum(grow)
        self.used += needed
        self.held[decoding] += grow
        self.decoding_cached = cached
        return decoding, preempted

    def _take(self, r: int, size: int, new_held: float, chunks: list[tuple[int, int]]) -> None:
        """Schedule a prefill chunk of ``size`` tokens for request ``r``, which then holds ``new_held`` blocks."""
        chunks.append((r, size))
        self.used += new_held - self.held[r]
        self.held[r] = new_held

    def continue_prefills(self, free_slots: int) -> tuple[list[tuple[int, int]], int]:
        """Chunks of the prompts already being prefilled, in admission order, within ``free_slots``
        tokens and the free blocks. Returns the chunks and the tokens left."""
        chunks: list[tuple[int, int]] = []
        for r in self.prefilling:
            if free_slots <= 0:
                break
            size, new_held = self._fit_chunk(
                r, min(int(self.target[r] - self.cached[r]), free_slots), self.capacity - self.used
            )
            if size:
                self._take(r, size, new_held, chunks)
                free_slots -= size
        return chunks, free_slots

    def admit(self, free_slots: int, chunks: list[tuple[int, int]]) -> None:
        """Admit waiting requests in order while seats, tokens and blocks (less the watermark) allow,
        each with its first chunk (appended to ``chunks``); a request arrives with its cached prompt
        tokens computed and the shared prefix's blocks."""
        while self.waiting and free_slots > 0 and len(self.running) < self.max_seqs:
            r = self.waiting[0]
            if self.cached[r] == 0 and self.held[r] == 0:
                self.cached[r], self.held[r] = self.hit[r], self.shared[r]
            room = self.capacity - self.used - self.reserve
            size, new_held = self._fit_chunk(r, min(int(self.target[r] - self.cached[r]), free_slots), room)
            if size == 0:
                break
            self.waiting.popleft()
            self.running.append(r)
            self._running_ids = None
            self.prefilling.append(r)
            self._take(r, size, new_held, chunks)
            free_slots -= size

    def advance(self, decoding: np.ndarray, chunk_ids, chunk_sizes, clock: float) -> np.ndarray:
        """Record a step that ended at ``clock``: decodes and chunks computed, first tokens and gaps
        (a decoding request has emitted before; a prompt computed again after a preemption emits
        its next token). Returns the requests that emitted a token."""
        self.cached[decoding] += 1
        if decoding.size:
            self.gaps.append(clock - self.last_token[decoding])
        prefilled = []  # requests whose last chunk this was
        for r, size in zip(chunk_ids, chunk_sizes, strict=True):
            self.cached[r] += size
            if self.cached[r] >= self.target[r]:
                prefilled.append(r)
                self.prefilling.remove(r)
                if self.generated[r]:
                    self.gaps.append(np.array([clock - self.last_token[r]]))
                else:
                    self.first[r] = clock
        emitting = np.concatenate((decoding, np.array(prefilled, dtype=np.int64))) if prefilled else decoding
        self.last_token[emitting] = clock
        self.generated[emitting] += 1
        return emitting

    def decode_steps_that_fit(self, decoding: np.ndarray, steps: int) -> int:
        """The most decode steps, up to ``steps``, before the decoding requests would need more KV
        blocks than are free (at least one: :meth:`schedule_decodes` gave each its next block)."""
        free = self.capacity - self.used
        if self.blocks.most_added(decoding.size, steps - 1) <= free:  # each holds the blocks of its next token
            return steps
        cached, held = self.cached[decoding], self.held[decoding]

        def fit(k: int) -> bool:
            return float((self.blocks(cached + k) - held).sum()) <= free

        if fit(steps):
            return steps
        low, high = 1, steps
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if fit(middle) else (low, middle - 1)
        return low

    def advance_decodes(self, decoding: np.ndarray, durations: np.ndarray, clock: float) -> np.ndarray:
        """Record a run of decode-only steps of ``durations`` that ended at ``clock``: each decoding
        request computed and emitted one token per step, holding the blocks they need; ``decoding``
        are the requests :meth:`schedule_decodes` last returned."""
        k = len(durations)
        cached = self.decoding_cached + k
        grown = self.blocks(cached) - self.held[decoding]
        self.used += self._sum(grown)
        self.held[decoding] += grown
        self.cached[decoding] = cached
        self.gaps.append(durations[np.newaxis].repeat(decoding.size, axis=0).ravel())  # each request's gaps
        self.generated[decoding] += k
        self.last_token[decoding] = clock
        return decoding

    def finishing(self, emitting: np.ndarray) -> np.ndarray:
        """The requests among ``emitting`` that have their whole answer."""
        return emitting[self.generated[emitting] >= self.answer[emitting]]

    def retire(self, finishing: np.ndarray, clock: float) -> int:
        """Finish ``finishing``, requests that have their whole answer (:meth:`finishing`): free their blocks."""
        if finishing.size:
            self.finish[finishing] = clock
            self.used -= self._sum(self.held[finishing] - self.shared[finishing])
            self.held[finishing] = 0
            for r in finishing.tolist():
                self.running.remove(r)
            self._running_ids = None
        return int(finishing.size)

    def _sum(self, blocks: np.ndarray) -> float:
        """Blocks added up: a few whole numbers of blocks in Python (the same sum, exactly), else with numpy."""
        return (
            float(sum(blocks.tolist())) if self.blocks.uniform and blocks.size <= FEW else float(np.add.reduce(blocks))
        )

    def _fit_chunk(self, r: int, size: int, free: float) -> tuple[int, float]:
        """The largest chunk of at most ``size`` tokens whose new blocks fit in ``free`` blocks, and
        the blocks request ``r`` then holds. A sequence's blocks grow only as a token starts a
        block, so a shorter chunk that fits ends where a block is full, or is empty."""
        cached, held, blocks = int(self.cached[r]), self.held[r], self.blocks
        whole = blocks(cached + size)
        if whole - held <= free:
            return size, whole
        ends = np.arange(-cached % blocks.size, size, blocks.size)  # chunks that end a block
        after = blocks(cached + ends)
        fitting = np.flatnonzero(after - held <= free)
        return (int(ends[fitting[-1]]), after[fitting[-1]]) if fitting.size else (0, held)
