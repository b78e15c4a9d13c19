"""Time of engine work: FLOPs and bytes of a phase, the roofline with its named terms (compute,
memory, communication, overheads, host reads, side models), prefill and decode."""

__all__ = [
    "comm",  # all-reduce and pipeline sends
    "host_link",  # reads over PCIe from host memory
    "phases",  # phase_time, prefill_time, decode_step_time
    "roofline",  # PhaseTime, work_time
    "work",  # FLOPs, attended pairs, weight bytes a step reads
]
