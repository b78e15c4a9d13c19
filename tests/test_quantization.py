"""quantization_config as real checkpoints write it (core/spec/quantization.py, via config.json import)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.spec.hf_config import ConfigError, model_from_config
from core.spec.quantization import QuantizationError, checkpoint_format

TINY = json.loads((Path(__file__).parent / "data" / "tiny_llama_config.json").read_text())

# each as the method's checkpoints on the Hub write it (keys trimmed to those read)
CONFIGS = [
    (
        {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"},
        "int4",
        "AWQ 4-bit, group size 128",
    ),
    (
        {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True},
        "int4",
        "GPTQ 4-bit, group size 128",
    ),
    ({"quant_method": "gptq", "bits": 8, "group_size": 128}, "int8", "GPTQ 8-bit, group size 128"),
    (
        {"quant_method": "fp8", "activation_scheme": "dynamic", "fmt": "e4m3", "weight_block_size": [128, 128]},
        "fp8",
        "FP8, dynamic activation scales, 128x128 weight blocks",
    ),
    (
        {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn", "lm_head"]},
        "mxfp4",
        "MXFP4 (block 32); 16-bit: attention",  # the ignore list names every layer's attention
    ),
    ({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16}, "nvfp4", "ModelOpt NVFP4 (block 16)"),
    ({"quant_method": "modelopt", "quant_algo": "FP8"}, "fp8", "ModelOpt FP8"),
    (
        {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"},
        "int4",
        "bitsandbytes 4-bit (nf4)",
    ),
    ({"quant_method": "bitsandbytes", "load_in_8bit": True}, "int8", "bitsandbytes 8-bit (LLM.int8)"),
    (
        {
            "quant_method": "compressed-tensors",
            "format": "pack-quantized",
            "config_groups": {
                "group_0": {
                    "weights": {"num_bits": 4, "type": "int", "group_size": 128},
                    "input_activations": None,
                    "targets": ["Linear"],
                }
            },
            "ignore": ["lm_head"],
        },
        "int4",
        "compressed-tensors W4A16",
    ),
    (
        {
            "quant_method": "compressed-tensors",
            "config_groups": {
                "group_0": {
                    "weights": {"num_bits": 8, "type": "int"},
                    "input_activations": {"num_bits": 8, "type": "int", "dynamic": True},
                }
            },
        },
        "int8",
        "compressed-tensors INT8 W8A8",
    ),
    (
        {
            "quant_method": "compressed-tensors",
            "format": "float-quantized",
            "config_groups": {
                "group_0": {
                    "weights": {"num_bits": 8, "type": "float"},
                    "input_activations": {"num_bits": 8, "type": "float"},
                }
            },
        },
        "fp8",
        "compressed-tensors FP8 W8A8",
    ),
    (
        {
            "quant_method": "compressed-tensors",
            "format": "nvfp4-pack-quantized",
            "config_groups": {
                "group_0": {
                    "weights": {"num_bits": 4, "type": "float", "group_size": 16},
                    "input_activations": {"num_bits": 4, "type": "float"},
                }
            },
        },
        "nvfp4",
        "compressed-tensors NVFP4 W4A4",
    ),
]


@pytest.mark.parametrize(
    ("quant", "weights", "detail"), CONFIGS, ids=[f"{c[0]['quant_method']}-{c[1]}" for c in CONFIGS]
)
def test_each_method_reads_as_the_format_it_stores(quant, weights, detail):
    fmt = checkpoint_format(quant)
    assert (fmt.weights, fmt.detail) == (weights, detail)
    model = model_from_config(TINY | {"quantization_config": quant}, id="q")
    assert model.native_dtype == weights and model.quantization == detail


def test_an_unknown_or_malformed_config_names_what_is_wrong():
    with pytest.raises(QuantizationError, match="unsupported quant_method 'hqq'"):
        checkpoint_format({"quant_method": "hqq"})
    with pytest.raises(QuantizationError, match="'bits' must be an integer"):
        checkpoint_format({"quant_method": "gptq", "bits": "four"})
    with pytest.raises(ConfigError, match=r"config\.json: quantization_config: AWQ with 3 bits"):
        model_from_config(TINY | {"quantization_config": {"quant_method": "awq", "bits": 3}}, id="q")
    with pytest.raises(ConfigError, match="'quantization_config' must be an object"):
        model_from_config(TINY | {"quantization_config": "awq"}, id="q")


def test_the_cli_says_what_the_config_stores(cli, tmp_path):
    path = tmp_path / "config.json"
    quant = {"quant_method": "awq", "bits": 4, "group_size": 128}
    path.write_text(json.dumps(TINY | {"quantization_config": quant}))
    code, out, _ = cli("estimate", "--model", str(path), "--gpu", "l4", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["weight_dtype"] == "int4"
    assert data["model_match"]["summary"].endswith("architecture, int4 (AWQ 4-bit, group size 128)")


def test_modules_a_checkpoint_ignores_stay_16bit():
    """NVIDIA's NVFP4 Qwen3.5-122B-A10B (its real config.json) quantizes only the routed experts:
    its ignore list names every layer's attention, linear attention and shared experts."""
    import dataclasses

    from core.memory.weights import weight_bytes
    from core.spec.hf_config import model_from_config, read_config
    from core.spec.params import part_params
    from core.spec.precision import weight_precision

    path = Path(__file__).parent / "data" / "qwen3.5-122b-a10b-nvfp4_config.json"
    model = model_from_config(read_config(path))
    assert model.native_dtype == "nvfp4"
    assert dict(model.unquantized) == {"attention": 1.0, "linear_attention": 1.0, "shared_experts": 1.0}
    fp4 = weight_precision("nvfp4")
    kept = sum(part_params(model, part) for part in ("attention", "linear_attention", "shared_experts"))
    as_if_all = weight_bytes(dataclasses.replace(model, unquantized=()), fp4).total
    assert weight_bytes(model, fp4).total - as_if_all == pytest.approx(kept * (2 - fp4.bytes_per_element))
    # the checkpoint's list applies to its own format only: quantizing the same model to int4 compresses all
    int4 = weight_precision("int4")
    assert weight_bytes(model, int4).total == weight_bytes(dataclasses.replace(model, unquantized=()), int4).total


@pytest.mark.parametrize(
    ("patterns", "parts"),
    [
        (["lm_head", "model.layers.0.self_attn*", "model.layers.1.self_attn*"], {"attention": (0, 1)}),
        (["re:.*mlp.gate$", "model.visual*", "mtp*", "model.embed_tokens"], {}),
        (["model.layers.*.self_attn", "model.layers.*.mlp.router"], {"attention": None}),  # gpt-oss
        (
            ["model.layers.3.mixer", "model.layers.5.mlp.shared_experts"],
            {"linear_attention": (3,), "shared_experts": (5,)},
        ),
    ],
)
def test_ignore_patterns_name_parts_and_layers(patterns, parts):
    from core.spec.quantization import unquantized_modules

    assert dict(unquantized_modules({"ignore": patterns})) == parts


def test_a_malformed_ignore_list_is_refused():
    from core.spec.quantization import unquantized_modules

    with pytest.raises(QuantizationError, match="'ignore' must be a list"):
        unquantized_modules({"ignore": "lm_head"})
