"""A fast, deterministic simulator of one replica serving traffic the way vLLM-style engines do.

Each engine step: running requests are scheduled first (one token per decoding request, then
chunks of the prompts still being prefilled), then waiting requests are admitted in arrival order
while ``max_num_seqs`` and the token budget (``max_num_batched_tokens``) allow and free KV blocks
hold their first chunk. When a decoding request needs a block and none is free, the most recently
admitted request is preempted (its KV freed; it re-prefills prompt + generated tokens later, as
vLLM's recompute does). A step lasts the core's roofline time for its mix of tokens, attention
pairs and KV reads (:func:`core.latency.work_time`), so the static and simulated views agree.

Levers: with prefix caching a request is admitted with its cached prompt tokens already computed
and the shared prefix's blocks are held once for all; offloaded weights are read every step and
KV beyond the GPU's budget (up to the host space) is read every step; LoRA adds its adapter work
to each step. Speculative decoding scales decode-only steps by the static model's per-token time
ratio at the running batch and context (:func:`core.latency.decode_step_time` over the plain step);
steps that also prefill are timed without it, plus the proposer's prefill of their prompt chunks.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from core.levers.offload import host_read_seconds
from core.levers.prefix import cached_prompt_tokens, shared_prefix_tokens
from core.memory.budget import memory_breakdown
from core.memory.capacity import kv_capacity
from core.memory.request_kv import kv_bytes_per_token_all
from core.serving.sim_result import SimResult
from core.serving.step_cost import Blocks, StepModel, decode_run
from core.serving.traffic import Lengths, Traffic, arrival_times
from core.spec.deployment import Deployment
from core.timing.phases import decode_step_time, plain_decode_step_time, proposer_deployment

MAX_REQUESTS = 200_000
WATERMARK = 0.01
"""Share of KV blocks admissions leave free for running requests to grow (vLLM V0's default)."""
SERIES_POINTS = 2000


def simulate(
    dep: Deployment,
    traffic: Traffic,
    num_requests: int,
    prompts: Lengths | np.ndarray,
    answers: Lengths | np.ndarray,
    seed: int = 0,
) -> SimResult:
    """Serve ``num_requests`` requests of ``traffic`` on one replica of ``dep`` (see module docstring).

    Lengths are drawn from ``Lengths`` or taken (cyclically) from arrays, e.g. a CSV's columns.
    """
    if isinstance(num_requests, bool) or not isinstance(num_requests, int) or not 1 <= num_requests <= MAX_REQUESTS:
        raise ValueError(f"num_requests must be an integer from 1 to {MAX_REQUESTS}, got {num_requests!r}")
    rng = np.random.default_rng(seed)
    longest = dep.max_model_len
    prompt = _lengths(prompts, num_requests, rng, longest - 1)
    answer = np.minimum(_lengths(answers, num_requests, rng, longest - 1), longest - prompt)
    answer = np.maximum(answer, 1)
    memory = memory_breakdown(dep)
    if memory.kv_budget <= 0:
        raise ValueError("the model does not fit: no memory is left for the KV cache")
    capacity = kv_capacity(dep, memory.kv_space, 1).num_blocks
    gpu_blocks = kv_capacity(dep, memory.kv_budget, 1).num_blocks
    block_bytes = dep.engine.block_size * kv_bytes_per_token_all(dep)
    blocks = Blocks(dep)
    # prefix caching: tokens found cached at admission; the shared prefix's blocks are held once
    hit = np.asarray(cached_prompt_tokens(dep.levers.prefix, prompt, dep.engine.block_size), dtype=np.int64)
    shared = np.asarray(blocks(shared_prefix_tokens(dep.levers.prefix, prompt, dep.engine.block_size)), dtype=float)
    prefix_blocks = float(shared.max())
    need = blocks(prompt + answer) - shared + prefix_blocks
    if need.max() > capacity:
        worst = int(np.argmax(need))
        raise ValueError(
            f"a request of {prompt[worst] + answer[worst]} tokens needs more KV cache than the "
            f"whole budget ({capacity} blocks); shorten the lengths or lower max_model_len"
        )
    token_budget, max_seqs = dep.engine.batch_limits(dep.gpu.memory_bytes, dep.gpu.name)
    step_model = StepModel(dep)
    proposer = proposer_deployment(dep)
    proposer_model = None if proposer is None else StepModel(proposer)  # it prefills every prompt too

    def spill_s(blocks_used: float) -> float:
        """Reading the KV held beyond the GPU's budget from host memory, once per step [s]."""
        if blocks_used <= gpu_blocks:
            return 0.0
        return host_read_seconds(dep.gpu, dep.efficiency, max(blocks_used - gpu_blocks, 0.0) * block_bytes)

    def speculation(n: int, context: float) -> float:
        """Per-token decode time with speculation over without, at this batch and context."""
        if dep.levers.speculative is None:
            return 1.0
        return float(decode_step_time(dep, n, context).seconds / plain_decode_step_time(dep, n, context).seconds)

    # arrival: when a request reaches the engine, request_overhead_s after the user sent it
    delay = dep.efficiency.request_overhead_s
    arrival = np.full(num_requests, np.inf)
    if traffic.mode == "rate":
        arrival[:] = arrival_times(traffic.rate_per_s, num_requests, rng, traffic.burstiness) + delay
    clients = {"rate": 0, "concurrency": traffic.concurrency, "users": traffic.users}[traffic.mode]
    think = traffic.think_time_s if traffic.mode == "users" else 0.0
    released = min(clients, num_requests) if clients else num_requests
    if clients:
        arrival[:released] = (rng.uniform(0, think, released) if think else 0.0) + delay
    pending = sorted(range(released), key=lambda i: arrival[i])  # released, not yet arrived
    next_release = released

    first = np.full(num_requests, np.nan)
    finish = np.full(num_requests, np.nan)
    last_token = np.zeros(num_requests)
    cached = np.zeros(num_requests, dtype=np.int64)
    target = prompt.copy()  # tokens to prefill before decoding (prompt, plus output after a preemption)
    generated = np.zeros(num_requests, dtype=np.int64)
    held = np.zeros(num_requests)  # blocks each request holds
    waiting: deque[int] = deque()
    running: list[int] = []
    used = prefix_blocks
    clock = 0.0
    preemptions = steps = done = 0
    gaps: list[np.ndarray] = []
    series = []
    in_system = 0.0
    pending_pos = 0

    while done < num_requests:
        while pending_pos < len(pending) and arrival[pending[pending_pos]] <= clock:
            waiting.append(pending[pending_pos])
            pending_pos += 1
        if not running and not waiting:
            clock = float(arrival[pending[pending_pos]])
            continue
        free_slots = token_budget
        run = np.array(running, dtype=np.int64)
        decoding = run[cached[run] >= target[run]]
        # blocks for one more token of every decoding request; preempt the newest until they fit
        grow = blocks(cached[decoding] + 1) - held[decoding]
        preempted = False
        while decoding.size and used + grow.sum() > capacity:
            preempted = True
            victim = running.pop()
            used -= held[victim] - shared[victim]
            held[victim] = 0
            target[victim] = prompt[victim] + max(generated[victim] - 1, 0)
            cached[victim] = 0
            waiting.appendleft(victim)
            preemptions += 1
            keep = decoding != victim
            decoding, grow = decoding[keep], grow[keep]
        decoding = decoding[:free_slots]
        grow = grow[:free_slots]
        free_slots -= decoding.size
        used += grow.sum()
        held[decoding] += grow
        chunks: list[tuple[int, int]] = []
        for r in running:  # partial prefills continue
            if free_slots <= 0:
                break
            if cached[r] < target[r]:
                size = _fit_chunk(r, min(int(target[r] - cached[r]), free_slots), cached, held, capacity - used, blocks)
                if size:
                    chunks.append((r, size))
                    free_slots -= size
                    used += blocks(cached[r] + size) - held[r]
                    held[r] = blocks(cached[r] + size)
        # like vLLM: no admissions in a step that had to preempt, and keep a watermark of free blocks
        while waiting and free_slots > 0 and len(running) < max_seqs and not preempted:
            r = waiting[0]
            if cached[r] == 0 and held[r] == 0:  # its cached prompt tokens are there already
                cached[r], held[r] = hit[r], shared[r]
            room = capacity - used - WATERMARK * capacity
            size = _fit_chunk(r, min(int(target[r] - cached[r]), free_slots), cached, held, room, blocks)
            if size == 0:
                break
            waiting.popleft()
            running.append(r)
            chunks.append((r, size))
            free_slots -= size
            used += blocks(cached[r] + size) - held[r]
            held[r] = blocks(cached[r] + size)
        if decoding.size == 0 and not chunks:
            # partial prefills filled the cache and none can continue: preempt the newest, as vLLM does
            victim = running.pop()
            used -= held[victim] - shared[victim]
            held[victim] = 0
            cached[victim] = 0
            waiting.appendleft(victim)
            preemptions += 1
            continue
        if not chunks and decoding.size == len(running):
            # decode-only steps repeat until something changes: take them at once
            upcoming = float(arrival[pending[pending_pos]]) if pending_pos < len(pending) else np.inf
            free = capacity - used
            ratio = speculation(decoding.size, float(cached[decoding].mean()))
            durations = decode_run(
                step_model,
                cached[decoding],
                answer[decoding] - generated[decoding],
                (upcoming - clock) / ratio,
                blocks,
                held[decoding],
                free,
            )
            durations = durations * ratio + spill_s(used)
            k = len(durations)
            grown = blocks(cached[decoding] + k) - held[decoding]
            used += grown.sum()
            held[decoding] += grown
            in_system += (len(running) + len(waiting)) * float(durations.sum())
            clock += float(durations.sum())
            steps += k
            cached[decoding] += k
            gaps.append(np.tile(durations, decoding.size))
            emitting = decoding
            generated[emitting] += k
            last_token[emitting] = clock
        else:
            chunk_ids = np.array([c[0] for c in chunks], dtype=np.int64)
            chunk_sizes = np.array([c[1] for c in chunks], dtype=np.int64)
            new = np.concatenate((np.ones(decoding.size, dtype=np.int64), chunk_sizes))
            before = np.concatenate((cached[decoding], cached[chunk_ids]))
            duration = step_model.step(new, before) + spill_s(used)
            if proposer_model is not None and chunks:
                duration += proposer_model.step(chunk_sizes, cached[chunk_ids])
            in_system += (len(running) + len(waiting)) * duration
            clock += duration
            steps += 1
            cached[decoding] += 1
            cached[chunk_ids] += chunk_sizes
            finished_prefill = chunk_ids[cached[chunk_ids] >= target[chunk_ids]]
            emitting = np.concatenate((decoding, finished_prefill))
            fresh = emitting[generated[emitting] == 0]
            first[fresh] = clock
            old = emitting[generated[emitting] > 0]
            if old.size:
                gaps.append(clock - last_token[old])
            last_token[emitting] = clock
            generated[emitting] += 1
        finishing = emitting[generated[emitting] >= answer[emitting]]
        if finishing.size:
            finish[finishing] = clock
            used -= (held[finishing] - shared[finishing]).sum()
            held[finishing] = 0
            done += finishing.size
            gone = set(finishing.tolist())
            running = [r for r in running if r not in gone]
            for _ in range(finishing.size):  # closed loop: each client sends its next request
                if clients and next_release < num_requests:
                    arrival[next_release] = clock + (rng.exponential(think) if think else 0.0) + delay
                    _insert_sorted(pending, pending_pos, next_release, arrival)
                    next_release += 1
        series.append((clock, len(waiting), len(running), used / capacity))

    times = np.array(series)
    pick = np.unique(np.linspace(0, len(times) - 1, min(SERIES_POINTS, len(times))).astype(int))
    return SimResult(
        arrival=arrival - step_model.dep.efficiency.request_overhead_s,  # when the user sent it
        first_token=first,
        finish=finish,
        prompt=prompt,
        answer=answer,
        itl=np.concatenate(gaps) if gaps else np.zeros(0),
        preemptions=preemptions,
        steps=steps,
        series_time=times[pick, 0],
        series_waiting=times[pick, 1],
        series_running=times[pick, 2],
        series_kv_used=times[pick, 3],
        time_in_system=in_system + delay * num_requests,
    )


def _lengths(spec: Lengths | np.ndarray, count: int, rng: np.random.Generator, longest: int) -> np.ndarray:
    if isinstance(spec, Lengths):
        return spec.sample(count, rng, longest)
    values = np.asarray(spec, dtype=np.int64)
    if values.size == 0 or values.min() < 1:
        raise ValueError("lengths must be at least 1 token")
    return np.clip(np.resize(values, count), 1, longest)


def _fit_chunk(r: int, size: int, cached: np.ndarray, held: np.ndarray, free: float, blocks) -> int:
    """The largest chunk of at most ``size`` tokens whose new blocks fit in ``free`` blocks."""
    if blocks(cached[r] + size) - held[r] <= free:
        return size
    low, high = 0, size
    while low < high:
        middle = (low + high + 1) // 2
        if blocks(cached[r] + middle) - held[r] <= free:
            low = middle
        else:
            high = middle - 1
    return low


def _insert_sorted(pending: list[int], start: int, request: int, arrival: np.ndarray) -> None:
    """Insert a released request into the not-yet-arrived part of ``pending``, keeping arrival order."""
    position = len(pending)
    while position > start and arrival[pending[position - 1]] > arrival[request]:
        position -= 1
    pending.insert(position, request)
