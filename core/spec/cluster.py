"""A cluster around the GPUs: how many share a server, and the link between servers."""

from __future__ import annotations

GPUS_PER_NODE = 8
"""GPUs in one server (HGX/DGX boards and most 8-GPU cloud instances)."""
INTER_NODE_LINKS = {
    # per GPU, one direction [bytes/s]
    "infiniband-ndr": 50e9,  # one 400 Gb/s ConnectX-7 per GPU, as in NVIDIA DGX H100 and DGX B200
    "roce-400g": 50e9,  # one 400 Gb/s RoCE v2 NIC per GPU
    "ethernet-100g": 12.5e9,  # one 100 GbE NIC per GPU
}
"""The inter-node link's per-GPU bandwidth (NVIDIA DGX H100 user guide: eight single-port
ConnectX-7 400 Gb/s adapters for the compute fabric, one per GPU)."""
DEFAULT_INTER_NODE = "infiniband-ndr"
INTER_NODE_LATENCY_S = 20e-6
"""The time of a small NCCL collective between servers [s]: an 8-byte all_reduce_perf between two
A100 servers over InfiniBand HDR takes 19-20 us (NVIDIA/nccl-tests#150), against the ~10 us of
one within a server; used for every tensor-parallel all-reduce of a group wider than a server and
every pipeline send between servers."""
