"""What is given: units, numeric formats, models, GPUs, the catalogs and Hugging Face configs they
come from, engine settings and efficiency assumptions, and a deployment with its workload.

Everything here is a frozen dataclass validated at creation (or a loader that returns one);
nothing here computes memory or time.
"""

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parents[2] / "data"
"""The built-in catalogs and the message catalog (here, so core.messages needs no module that uses it)."""

__all__ = [
    "catalog",  # Catalog, load_catalog, resolve_model: data/models and data/gpus as typed specs
    "changes",  # the single changes advice, fixes and sensitivity try
    "cluster",  # GPUs per server and the inter-node link (InfiniBand, RoCE, Ethernet)
    "deployment",  # Deployment (a model on GPUs), Workload, decode_context
    "display_name",  # clean_name: the one cleaning and length limit for names from outside
    "efficiency",  # Efficiency, its fitted defaults per GPU class, the release's and endpoint's rules (resolved)
    "engine",  # Parallelism, EngineConfig (endpoint included), the tensor-parallel split rule
    "engine_defaults",  # each engine's default flags by release (memory fraction, batch limits, block size)
    "gpu",  # GpuSpec
    "gpu_names",  # GPU names as people type them (h100, rtx4090, H100 80GB): find_gpus, match_gpu
    "hf_config",  # config.json -> ModelSpec
    "hub",  # a repo's config.json from the Hugging Face Hub (HF_TOKEN, HF_ENDPOINT, offline path)
    "json_fields",  # untrusted JSON read into typed fields (ValueErrors name the field); pack/unpack for URLs
    "json_text",  # parse_json: JSON from outside, one-line errors (long integers, surrogates, depth)
    "local_file",  # read_local_file: a file named on the command line, one-line errors for every bad path
    "mixers",  # per-layer kinds (attention, Gated DeltaNet, Mamba2, FFN-only) and their state shapes
    "model",  # ModelSpec, MoeSpec, MlaSpec, IndexerSpec
    "names",  # model names as people type them (Ollama's too): ModelMatch, find_models, match_model
    "params",  # parameter counts by group
    "precision",  # Precision, WEIGHT_PRECISIONS, KV_PRECISIONS
    "quantization",  # quantization_config -> the weight format a checkpoint stores
    "release",  # Release, parse_release: the engine and release the rules are for
    "scenario_codec",  # a scenario as a short dict by catalog ids, and a list of them as one URL token
    "suggestions",  # what an unresolved name may have meant: closest by edit distance, UnknownName
    "support",  # what vLLM runs on which GPU: minimum capabilities, weight-only kernels, bf16 -> fp16
    "units",  # GB vs GiB, TERA, MS, US
    "vllm_limits",  # flag values vLLM refuses at start-up: LoRA ranks, a token budget below max_num_seqs
]
