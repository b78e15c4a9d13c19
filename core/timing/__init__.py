"""Time of engine work: FLOPs and bytes of a phase, the roofline with its named terms (compute,
memory, communication, overheads, host reads, side models), prefill and decode, and the
continuous-batching operating point with B requests in flight. Levers sit above this package: the
deployment hands in the models of the levers that are on (:attr:`core.spec.deployment.Deployment.lever_models`)
and nothing here imports :mod:`core.levers`."""

__all__ = [
    "aic_backend",  # coverage, step_time_backend, aic_phase, aic_mixed, AicStepModel: the optional aic backend
    "aic_tables",  # AicTables: a deployment's step tables read from AIConfigurator (imports it lazily)
    "comm",  # all-reduce and pipeline sends
    "host_link",  # reads over PCIe from host memory
    "kernel_rates",  # Rate, gemm_fraction, gemv_bandwidth_fraction, attention fractions from measured tables
    "kernel_speed",  # KernelSpeed, kernel_speed: a deployment's measured GEMM and MoE rates by shape, and its tier
    "phase_parts",  # PhaseTime, StepWork: what a phase's time is made of
    "phases",  # phase_time, prefill_time, decode_step_time, side_deployments
    "roofline",  # PhaseTime, StepWork, work_time, Roofline (kernel classes added up)
    "steady_state",  # SteadyState, steady_state
    "step_fixed",  # step_fixed_seconds: step overhead + layers x layer overhead
    "work",  # FLOPs, attended pairs, weight bytes a step reads
]
