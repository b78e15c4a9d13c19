"""config.json import: every catalog config round-trips through JSON text; errors name the field."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from core.spec.catalog import DATA_DIR, load_model_file
from core.spec.hf_config import ConfigError, model_from_config, read_config, unread_dtype

MODEL_FILES = sorted((DATA_DIR / "models").glob("*.toml"))

LLAMA = {
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
}


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.stem)
def test_catalog_config_round_trips_through_json_text(path):
    entry = tomllib.loads(path.read_text())
    from_text = model_from_config(read_config(json.dumps(entry["config"])), id=entry["id"], name=entry["name"])
    from_catalog = load_model_file(path)
    for field in (
        "num_layers",
        "hidden_size",
        "num_heads",
        "num_kv_heads",
        "head_dim",
        "moe",
        "mla",
        "sliding_window",
        "sliding_layers",
        "tie_embeddings",
        "native_dtype",
    ):
        assert getattr(from_text, field) == getattr(from_catalog, field)


def test_reads_a_file_path(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAMA))
    model = model_from_config(read_config(path), id="mine", name="mine")
    assert model.head_dim == 128 and model.num_kv_heads == 8


def test_head_dim_defaults_to_hidden_over_heads_but_explicit_wins():
    assert model_from_config(LLAMA).head_dim == 128
    # Qwen3 and Gemma state head_dim explicitly, different from hidden / heads
    assert model_from_config({**LLAMA, "head_dim": 256}).head_dim == 256


def test_gemma2_alternates_sliding_layers_and_gemma3_every_sixth_is_global():
    gemma2 = {**LLAMA, "model_type": "gemma2", "num_hidden_layers": 4, "sliding_window": 4096, "head_dim": 256}
    assert model_from_config(gemma2).sliding_layers == (True, False, True, False)
    gemma3 = {**LLAMA, "model_type": "gemma3_text", "num_hidden_layers": 12, "sliding_window": 1024}
    assert model_from_config(gemma3).sliding_layers == (True,) * 5 + (False,) + (True,) * 5 + (False,)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"num_hidden_layers": None}, "missing field 'num_hidden_layers'"),
        ({"num_attention_heads": 0}, "invalid field 'num_attention_heads'"),
        ({"num_key_value_heads": 5}, "invalid field 'num_key_value_heads'"),
        ({"hidden_size": "4096"}, "invalid field 'hidden_size'"),
        ({"num_hidden_layers": 10**12}, "invalid field 'num_hidden_layers'"),
        ({"model_type": "bert"}, "unsupported model_type 'bert'"),
        ({"model_type": "mixtral"}, "missing field 'num_local_experts'"),
        ({"model_type": "deepseek_v3"}, "missing field"),
        ({"tie_word_embeddings": "yes"}, "invalid field 'tie_word_embeddings'"),
    ],
)
def test_errors_name_the_field(change, message):
    config = {k: v for k, v in {**LLAMA, **change}.items() if v is not None}
    with pytest.raises(ConfigError, match=message):
        model_from_config(config)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"model_type": "llama",', "invalid JSON at line 1"),
        ("[1, 2]", "expected a JSON object"),
        (b"\xff\xfe{", "not UTF-8"),
    ],
)
def test_bad_text_is_a_clear_error(tmp_path, text, message):
    if isinstance(text, bytes):
        path = tmp_path / "bad.json"
        path.write_bytes(text)
        text = path
    elif not text.startswith("{"):
        path = tmp_path / "bad.json"
        path.write_text(text)
        text = path
    with pytest.raises(ConfigError, match=message):
        read_config(text)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        read_config(tmp_path / "nope.json")


def test_a_file_path_that_is_no_file_is_a_clear_error_and_never_blocks(tmp_path):
    os.mkfifo(tmp_path / "pipe.json")  # open() on a FIFO would wait for a writer forever
    (tmp_path / "dir.json").mkdir()
    for path, message in (
        (tmp_path / "pipe.json", "is not a regular file"),
        (tmp_path / "dir.json", "is a directory"),
        (Path("/dev/zero"), "is not a regular file"),
        (tmp_path / ("x" * 300), "file name too long"),
    ):
        with pytest.raises(ConfigError, match=message):
            read_config(path)


def test_a_number_json_reads_but_no_model_could_have_is_refused_naming_its_path():
    text = json.dumps(LLAMA)[:-1] + ', "rope_scaling": {"factor": ' + "7" * 4400 + "}}"
    with pytest.raises(ConfigError, match=r"^config.json: invalid field 'rope_scaling.factor': an integer of 4,400"):
        read_config(text)  # before: json.loads' "Exceeds the limit (4300 digits)" ValueError, no field named


def test_an_unread_torch_dtype_is_reported_and_read_ones_are_not():
    assert unread_dtype({**LLAMA, "torch_dtype": "float1024"}) == "'float1024'"
    unstated = {k: v for k, v in LLAMA.items() if k != "torch_dtype"}
    assert unread_dtype({**unstated, "dtype": "float8_e4m3fn"}) == "'float8_e4m3fn'"  # newer transformers' key
    assert unread_dtype(LLAMA) is None and unread_dtype(unstated) is None
    quantized = {**LLAMA, "torch_dtype": "float1024", "quantization_config": {"quant_method": "fp8"}}
    assert unread_dtype(quantized) is None  # the quantization sets the weights, not torch_dtype
    assert model_from_config({**LLAMA, "torch_dtype": ["x"]}).native_dtype == "bf16"  # was a TypeError


def test_an_error_from_the_layer_reader_is_prefixed_once():
    mixtral = {**LLAMA, "model_type": "mixtral", "num_local_experts": 0, "num_experts_per_tok": 2}
    with pytest.raises(ConfigError) as refused:
        model_from_config(mixtral)
    assert str(refused.value).startswith("config.json: invalid field 'num_local_experts'")
