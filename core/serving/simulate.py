"""A fast, deterministic simulator of one replica serving traffic the way vLLM-style engines do.

Each engine step (:mod:`core.serving.scheduler`): running requests are scheduled first (one token
per decoding request, then chunks of the prompts still being prefilled), then waiting requests are
admitted in arrival order while ``max_num_seqs`` and the token budget (``max_num_batched_tokens``)
allow and free KV blocks hold their first chunk. When a decoding request needs a block and none is
free, the most recently admitted request is preempted (its KV freed; it re-prefills prompt +
generated tokens later, as vLLM's recompute does). A step lasts the core's roofline time for its
mix of tokens, attention pairs and KV reads (:mod:`core.serving.step_cost` on
:func:`core.timing.roofline.work_time`), so the static and simulated views agree. The API server
delivers each step's streamed tokens in its own process (:mod:`core.serving.delivery`): what the
clients see (first tokens, gaps, ends, a closed loop's next request) runs on its clock, the engine on its own.

Levers enter as they do in the static model: a request is admitted with its cached prompt tokens
computed and shared prefix blocks held once; a step's roofline carries the levers' work (host reads
of offloaded weights, adapter work); KV beyond the GPU's blocks, up to the host space, is read back
every step; models run beside the target prefill each prompt chunk; and decode-only steps are
scaled by the static per-token time ratio when a lever changes what a decode step is.

Data-parallel attention (dp > 1): the dp ranks step together (every MoE layer's all-to-all joins
them), each with its own scheduler, KV blocks (its tp GPUs' budget) and token budget. One rank is
simulated with 1/dp of the traffic (rate, clients or users, and requests) and the others taken to
run the same mix, so a step lasts the busiest rank's work on a replica of dp x the rank's sequences
(:mod:`core.serving.rank_step`, as :func:`core.timing.phases.phase_time` times it for
``estimate``): its own sequences' KV, attention and non-expert matmuls, its GPUs' share of all ranks'
expert routes, the all-to-all of its own tokens, the front end streaming every rank's tokens. The
replica's throughputs are dp x the rank's (:attr:`core.serving.sim_result.SimResult.ranks`).
"""

from __future__ import annotations

import numpy as np

from core.memory.budget import gpu_memory
from core.memory.capacity import kv_capacity
from core.memory.request_kv import cached_prompt_tokens, kv_bytes_per_token_all, shared_prefix_tokens
from core.memory.state import kv_block_size
from core.serving.arrivals import Arrivals
from core.serving.delivery import FrontEnd
from core.serving.rank_step import RankStepTimer
from core.serving.scheduler import Engine
from core.serving.sim_result import SimResult
from core.serving.step_cost import Blocks, StepTimer
from core.serving.traffic import Lengths, Traffic
from core.spec.deployment import Deployment

MAX_REQUESTS = 200_000
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
    ranks = dep.parallel.dp
    if ranks > 1:  # one rank of a data-parallel attention layout, with its share of the traffic
        traffic, num_requests = traffic.rank_share(ranks), max(1, round(num_requests / ranks))
    rng = np.random.default_rng(seed)
    longest = dep.max_model_len
    prompt = _lengths(prompts, num_requests, rng, longest - 1)
    answer = np.maximum(np.minimum(_lengths(answers, num_requests, rng, longest - 1), longest - prompt), 1)
    memory = gpu_memory(dep)
    if memory.kv_budget <= 0:
        raise ValueError("the model does not fit: no memory is left for the KV cache")
    capacity = kv_capacity(dep, memory.kv_space, 1).num_blocks
    blocks = Blocks(dep)
    hit = np.asarray(cached_prompt_tokens(dep, prompt), dtype=np.int64)
    shared = np.asarray(blocks(shared_prefix_tokens(dep, prompt)), dtype=float)
    need = blocks(prompt + answer) - shared + shared.max()
    if need.max() > capacity:
        worst = int(np.argmax(need))
        raise ValueError(
            f"a request of {prompt[worst] + answer[worst]} tokens needs more KV cache than the "
            f"whole budget ({capacity} blocks); shorten the lengths or lower max_model_len"
        )
    gpu_blocks = kv_capacity(dep, memory.kv_budget, 1).num_blocks
    timer = (RankStepTimer if ranks > 1 else StepTimer)(
        dep, gpu_blocks, kv_block_size(dep) * kv_bytes_per_token_all(dep)
    )
    engine = Engine(dep, prompt, answer, blocks, capacity, hit, shared)
    delay = dep.efficiency.request_overhead_s
    arrivals = Arrivals(traffic, num_requests, rng, delay, dep.efficiency.ingest_serial_s or 0.0)
    front = FrontEnd(dep.efficiency.frontend_per_token_s * ranks)  # the API server streams every rank's tokens
    clock = in_system = 0.0
    steps = done = 0
    series = []

    while done < num_requests:
        engine.waiting.extend(arrivals.arrived(clock))
        if not engine.running and not engine.waiting:
            clock = arrivals.upcoming
            continue
        decoding, preempted = engine.schedule_decodes()
        free_slots = engine.token_budget - decoding.size
        chunks, free_slots = engine.continue_prefills(free_slots) if engine.prefilling else ([], free_slots)
        if engine.waiting and not preempted:  # like vLLM: no admissions in a step that had to preempt
            engine.admit(free_slots, chunks)
        if decoding.size == 0 and not chunks:
            # partial prefills filled the cache and none can continue: preempt the newest, as vLLM does
            engine.preempt_newest()
            continue
        if not chunks and decoding.size == len(engine.running):
            # decode-only steps repeat until something changes: take them at once
            remaining = engine.answer[decoding] - engine.generated[decoding]
            durations = timer.decode_run(engine.decoding_cached, remaining, arrivals.upcoming - clock, engine.used)
            durations = durations[: engine.decode_steps_that_fit(decoding, len(durations))]
            elapsed = float(durations.sum())
            in_system += engine.in_system * elapsed
            clock += elapsed
            steps += len(durations)
            seen = clock  # when the clients have the last tokens (core.serving.delivery)
            if front.per_token:
                before = front.last
                delivered = front.run(clock - elapsed + np.cumsum(durations), decoding.size)
                durations, seen = np.diff(delivered, prepend=before), float(delivered[-1])
            engine.advance_decodes(decoding, durations, seen)
            finishing = decoding[remaining <= len(durations)]  # those whose answer the run completed
        else:
            chunk_ids = [r for r, _ in chunks]
            chunk_sizes = [size for _, size in chunks]
            prompt_chunks = [(size, int(engine.cached[r])) for r, size in chunks]
            duration = timer.step(engine.cached[decoding], prompt_chunks, engine.used)
            in_system += engine.in_system * duration
            clock += duration
            steps += 1
            seen = clock
            if front.per_token:
                done_prompts = sum(
                    engine.cached[r] + n >= engine.target[r] for r, n in zip(chunk_ids, chunk_sizes, strict=True)
                )
                seen = front.step(clock, decoding.size + int(done_prompts))
            finishing = engine.finishing(engine.advance(decoding, chunk_ids, chunk_sizes, seen))
        finished = engine.retire(finishing, seen)
        done += finished
        in_system += finished * (seen - clock)  # finished in the engine, in flight to the client
        arrivals.finished(finished, seen)
        series.append((clock, len(engine.waiting), len(engine.running), engine.used / capacity))

    times = np.array(series)
    pick = np.unique(np.linspace(0, len(times) - 1, min(SERIES_POINTS, len(times))).astype(int))
    return SimResult(
        arrival=arrivals.sent,  # when the user sent it
        first_token=engine.first,
        finish=engine.finish,
        prompt=prompt,
        answer=answer,
        itl=np.concatenate(engine.gaps) if engine.gaps else np.zeros(0),
        preemptions=engine.preemptions,
        steps=steps,
        series_time=times[pick, 0],
        series_waiting=times[pick, 1],
        series_running=times[pick, 2],
        series_kv_used=times[pick, 3],
        time_in_system=(in_system + (arrivals.ingest_seconds if arrivals.serial else delay * num_requests)) * ranks,
        ranks=ranks,
    )


def _lengths(spec: Lengths | np.ndarray, count: int, rng: np.random.Generator, longest: int) -> np.ndarray:
    if isinstance(spec, Lengths):
        return spec.sample(count, rng, longest)
    values = np.asarray(spec, dtype=np.int64)
    if values.size == 0 or values.min() < 1:
        raise ValueError("lengths must be at least 1 token")
    return np.clip(np.resize(values, count), 1, longest)
