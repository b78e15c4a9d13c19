"""Flag values vLLM refuses at start-up that the CLI would otherwise accept and compute for.

- ``--max-lora-rank``: vLLM takes only the ranks its LoRA kernels are built for,
  :data:`VLLM_LORA_RANKS` (``MaxLoRARanks`` in vllm/config/lora.py; rank 1 joined in October 2025,
  vllm-project/vllm#26461; releases of 2024 took fewer, from (8, 16, 32, 64)). A rank outside this
  set is refused by every release this tool models.
- ``--max-num-batched-tokens``: vLLM's scheduler refuses a token budget below ``max_num_seqs``
  ("max_num_batched_tokens (1) must be greater than or equal to max_num_seqs (256)", in
  ``SchedulerConfig`` since the V0 engine, vllm/config/scheduler.py ``verify_max_model_len``): each
  running sequence needs at least one token per step.
"""

from __future__ import annotations

VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)


def lora_rank_error(rank: int) -> str | None:
    """Why vLLM refuses ``--max-lora-rank rank``, or None."""
    if rank in VLLM_LORA_RANKS:
        return None
    ranks = ", ".join(map(str, VLLM_LORA_RANKS))
    return f"--max-lora-rank {rank} is not one vLLM accepts ({ranks}: MaxLoRARanks in vllm/config/lora.py)"


def batched_tokens_error(batched_tokens: int, max_num_seqs: int) -> str | None:
    """Why vLLM refuses a ``max_num_batched_tokens`` below ``max_num_seqs`` (set or default), or None."""
    if batched_tokens >= max_num_seqs:
        return None
    return (
        f"--max-num-batched-tokens {batched_tokens} is below max_num_seqs ({max_num_seqs}): vLLM refuses it "
        "(max_num_batched_tokens must be greater than or equal to max_num_seqs, vllm/config/scheduler.py); "
        "raise it or lower --max-num-seqs"
    )
