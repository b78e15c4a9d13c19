"""The scenario codec: catalog scenarios survive encode -> JSON -> token -> decode unchanged, defaults
stay out of the dict, custom entries are refused by name, and malformed input is a ValueError that
names the field (never another exception)."""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import zlib

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core.levers.settings import LORA_TARGETS, SPEC_METHODS, Levers, Lora, Offload, PrefixCaching, Speculative
from core.levers.speculative import draft_candidates
from core.spec import units
from core.spec.catalog import load_catalog
from core.spec.deployment import Deployment, Workload
from core.spec.efficiency import Efficiency, default_efficiency
from core.spec.engine import EngineConfig, Parallelism
from core.spec.precision import KV_PRECISIONS, WEIGHT_PRECISIONS, weight_precision
from core.spec.release import parse_release
from core.spec.scenario_codec import MAX_TOKEN_CHARS, decode, encode, from_token, to_token
from core.spec.support import kv_for

CATALOG = load_catalog()
MODELS = ["llama-3.1-8b", "qwen3-8b", "deepseek-v2-lite", "gpt-oss-20b", "qwen3-next-80b-a3b", "gemma-3-4b"]
GPUS = ["a10", "h100-sxm", "a100-80gb", "l4", "t4", "b200", "mi300x"]
RELEASES = [("vllm", None), ("vllm", "0.6.3"), ("vllm", "0.19.1"), ("sglang", None), ("trtllm", "1.0.0")]


def scenario(model="llama-3.1-8b", gpu="a10", weights=None, kv="auto", tp=1, work=None, **engine) -> tuple:
    spec = CATALOG.model(model)
    w = weight_precision(weights or spec.native_dtype)
    levers = engine.pop("levers", Levers())
    dep = Deployment(
        model=spec,
        gpu=CATALOG.gpu(gpu),
        weights=w,
        kv=kv_for(kv, w, CATALOG.gpu(gpu)),
        parallel=Parallelism(tp=tp),
        engine=EngineConfig(**engine),
        levers=levers,
    )
    return dep, work or Workload(input_len=2048, output_len=512, batch=16)


def through_token(dep: Deployment, work: Workload) -> tuple[Deployment, Workload]:
    """encode, JSON text, a one-scenario token, and back."""
    data = json.loads(json.dumps(encode(dep, work)))
    (restored,) = from_token(to_token([data]))
    return decode(restored, CATALOG)


# --- round trip ---------------------------------------------------------------------------------


def test_defaults_stay_out_of_the_dict():
    dep, work = scenario(work=Workload())
    assert encode(dep, work) == {"model": "llama-3.1-8b", "gpu": "a10"}
    assert decode({"model": "llama-3.1-8b", "gpu": "a10"}, CATALOG) == (dep, work)


def test_a_sidebar_scenario_round_trips_and_names_what_it_set():
    release = parse_release("sglang", "0.5.2")
    eff = dataclasses.replace(default_efficiency("hbm", release), compute=0.42, per_sequence_overhead_s=None)
    dep, work = scenario(
        gpu="h100-sxm",
        weights="fp8",
        kv="fp8",
        tp=2,
        release=release,
        gpu_memory_utilization=0.85,
        max_model_len=16384,
        max_num_batched_tokens=4096,
        max_num_seqs=128,
        block_size=32,
        non_torch_bytes_tp=1.5 * units.GiB,
        efficiency=eff,
        levers=Levers(
            speculative=Speculative(method="draft", draft=CATALOG.model("llama-3.2-1b"), k=3, acceptance=0.65),
            prefix=PrefixCaching(shared_tokens=1024, hit_rate=0.25),
            offload=Offload(weights_bytes=2 * units.GiB, kv_bytes=8 * units.GiB),
            lora=Lora(adapters=4, rank=32, targets="attention"),
            attention="eager",
        ),
    )
    data = encode(dep, work)
    assert data["engine"]["release"] == "sglang 0.5.2"
    assert data["engine"]["efficiency"] == {"compute": 0.42, "per_sequence_overhead_s": None}
    assert data["levers"]["speculative"] == {"k": 3, "acceptance": 0.65, "draft": "llama-3.2-1b"}
    assert data["weights"] == "fp8" and data["kv"] == "fp8" and data["tp"] == 2
    assert through_token(dep, work) == (dep, work)


def test_the_checkpoint_a_search_named_round_trips():
    base = CATALOG.model("llama-3.1-8b")
    named = dataclasses.replace(base, hf_id="someone/Llama-3.1-8B-Instruct-FP8", native_dtype="fp8")
    dep = Deployment(
        model=named, gpu=CATALOG.gpu("h100-sxm"), weights=WEIGHT_PRECISIONS["fp8"], kv=KV_PRECISIONS["bf16"]
    )
    data = encode(dep, Workload())
    assert data["served_as"] == named.hf_id and data["native_dtype"] == "fp8" and "weights" not in data
    assert through_token(dep, Workload()) == (dep, Workload())


@st.composite
def catalog_scenarios(draw):
    """Valid scenarios over several catalog models and GPUs, engine settings and levers."""
    model = CATALOG.model(draw(st.sampled_from(MODELS)))
    gpu = CATALOG.gpu(draw(st.sampled_from(GPUS)))
    weights = WEIGHT_PRECISIONS[draw(st.sampled_from([model.native_dtype, *WEIGHT_PRECISIONS]))]
    kv = kv_for(draw(st.sampled_from(["auto", *KV_PRECISIONS])), weights, gpu)
    release = parse_release(*draw(st.sampled_from(RELEASES)))
    maybe = lambda strategy: draw(st.none() | strategy)  # noqa: E731
    efficiency = None
    if draw(st.booleans()):
        efficiency = Efficiency(
            compute=draw(st.floats(0.01, 1.0)),
            bandwidth=draw(st.floats(0.01, 1.0)),
            step_overhead_s=draw(st.floats(0.0, 0.01)),
            per_sequence_overhead_s=maybe(st.floats(0.0, 0.01)),
        )
    max_len = maybe(st.integers(1024, model.max_context))
    engine = EngineConfig(
        release=release,
        gpu_memory_utilization=maybe(st.floats(0.05, 1.0)),
        max_model_len=max_len,
        max_num_batched_tokens=maybe(st.integers(256, 65536)),
        max_num_seqs=maybe(st.integers(1, 4096)),
        block_size=maybe(st.sampled_from([1, 16, 32, 64])),
        cuda_graph_bytes=draw(st.sampled_from([0.9 * units.GiB, 0.0, 1.25 * units.GiB])),
        efficiency=efficiency,
    )
    method = draw(st.sampled_from([None, *SPEC_METHODS]))
    speculative = None
    if method is not None:
        drafts = draft_candidates(model, CATALOG.models)
        assume(method != "draft" or drafts)
        speculative = Speculative(
            method=method,
            draft=drafts[0] if method == "draft" else None,
            k=draw(st.integers(1, 16)),
            acceptance=draw(st.floats(0.0, 1.0)),
        )
    levers = Levers(
        speculative=speculative,
        prefix=PrefixCaching(shared_tokens=draw(st.integers(0, 4096)), hit_rate=draw(st.floats(0.0, 1.0))),
        offload=Offload(weights_bytes=draw(st.floats(0.0, 8 * units.GiB)), kv_bytes=draw(st.sampled_from([0.0, 1e9]))),
        lora=draw(st.none() | st.builds(Lora, adapters=st.integers(1, 8), targets=st.sampled_from(LORA_TARGETS))),
        attention=draw(st.sampled_from(["flash", "eager"])),
    )
    try:
        dep = Deployment(
            model=model,
            gpu=gpu,
            weights=weights,
            kv=kv,
            parallel=Parallelism(tp=draw(st.sampled_from([1, 2, 4, 8]))),
            engine=engine,
            levers=levers,
        )
    except ValueError:
        assume(False)
    longest = dep.max_model_len
    input_len = draw(st.integers(1, longest - 1))
    work = Workload(
        input_len=input_len, output_len=draw(st.integers(1, longest - input_len)), batch=draw(st.integers(1, 4096))
    )
    return dep, work


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(catalog_scenarios())
def test_catalog_scenarios_round_trip_through_json_and_a_token(pair):
    dep, work = pair
    assert through_token(dep, work) == (dep, work)


def test_several_scenarios_share_one_token():
    pairs = [scenario(), scenario(work=Workload(batch=4)), scenario(gpu="h100-sxm", tp=2, max_model_len=8192)]
    token = to_token([encode(*pair) for pair in pairs])
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")  # no padding
    assert len(token) < 400
    assert [decode(item, CATALOG) for item in from_token(token)] == pairs


# --- what cannot be encoded ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (
            lambda dep: dataclasses.replace(dep, model=dataclasses.replace(dep.model, id="custom-tiny", name="tiny")),
            "tiny",
        ),
        (lambda dep: dataclasses.replace(dep, model=dataclasses.replace(dep.model, vocab_size=1000)), "Llama-3.1-8B"),
        (
            lambda dep: dataclasses.replace(
                dep, gpu=dataclasses.replace(dep.gpu, id="custom-lab-card", name="Lab card")
            ),
            "Lab card",
        ),
    ],
    ids=["custom-model", "edited-catalog-model", "custom-gpu"],
)
def test_entries_that_are_not_the_catalogs_are_refused_by_name(change, named):
    dep, work = scenario()
    with pytest.raises(ValueError, match=f"{named}.*not in the catalog"):
        encode(change(dep), work)


@pytest.mark.parametrize(
    "draft",
    [
        dataclasses.replace(CATALOG.model("llama-3.2-1b"), id="custom-draft", name="my draft"),
        dataclasses.replace(CATALOG.model("llama-3.2-1b"), hf_id="someone/draft", name="my draft"),  # no served_as
    ],
)
def test_a_draft_model_that_is_not_the_catalogs_is_refused_by_name(draft):
    dep, work = scenario(levers=Levers(speculative=Speculative(method="draft", draft=draft)))
    with pytest.raises(ValueError, match="draft model 'my draft'"):
        encode(dep, work)


# --- refusals name the field --------------------------------------------------------------------

VALID = {"model": "llama-3.1-8b", "gpu": "a10", "engine": {"max_model_len": 8192}}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"model": "no-such-model"}, "model"),
        ({"model": "Llama-3.1-8B"}, "model"),  # ids are exact, not names
        ({"gpu": 80}, "gpu"),
        ({"gpu": None}, "gpu"),
        ({"weights": "int3"}, "weights"),
        ({"kv": "fp4"}, "kv"),
        ({"native_dtype": "fp12"}, "native_dtype"),
        ({"served_as": "[x](javascript:alert(1))"}, "served_as"),
        ({"tp": 0}, "tp"),
        ({"tp": True}, "tp"),
        ({"tp": 2.0}, "tp"),
        ({"tp": 3}, "deployment"),  # 32 heads do not split over 3 GPUs
        ({"pp": 1000}, "deployment"),
        ({"batch": 0}, "batch"),
        ({"input_len": "2048"}, "input_len"),
        ({"input_len": 10**400}, "input_len"),
        ({"input_len": 8000, "output_len": 8000}, r"input_len \+ output_len"),
        ({"surprise": 1}, "surprise"),
        ({"engine": []}, "engine"),
        ({"engine": {"max_num_seqs": -1}}, r"engine\.max_num_seqs"),
        ({"engine": {"max_num_seqs": {"a": {"b": 1}}}}, r"engine\.max_num_seqs"),
        ({"engine": {"gpu_memory_utilization": 2.0}}, r"engine\.gpu_memory_utilization"),
        ({"engine": {"gpu_memory_utilization": float("nan")}}, r"engine\.gpu_memory_utilization"),
        ({"engine": {"max_model_len": 10**7}}, "deployment"),  # beyond the model's context
        ({"engine": {"cuda_graph_bytes": 1e30}}, r"engine\.cuda_graph_bytes"),
        ({"engine": {"release": "vllm 0.1.0"}}, r"engine\.release"),
        ({"engine": {"release": "ollama 1.2.3"}}, r"engine\.release"),
        ({"engine": {"release": "vllm latest"}}, r"engine\.release"),
        ({"engine": {"efficiency": {"compute": 5}}}, r"engine\.efficiency\.compute"),
        ({"engine": {"efficiency": {"compute": None}}}, r"engine\.efficiency\.compute"),
        ({"engine": {"efficiency": {"turbo": 1}}}, r"engine\.efficiency\.turbo"),
        ({"levers": {"speculative": {"draft": "no-such-draft"}}}, r"levers\.speculative\.draft"),
        ({"levers": {"speculative": {"method": "ngram", "k": 99}}}, r"levers\.speculative"),
        ({"levers": {"speculative": {"method": "ngram", "draft": "llama-3.2-1b"}}}, r"levers\.speculative"),
        ({"levers": {"speculative": {"draft": "qwen3-0.6b"}}}, "deployment"),  # another vocabulary
        ({"levers": {"prefix": {"hit_rate": 1.5}}}, r"levers\.prefix\.hit_rate"),
        ({"levers": {"offload": {"weights_bytes": -1}}}, r"levers\.offload\.weights_bytes"),
        ({"levers": {"lora": {"targets": "everything"}}}, r"levers\.lora\.targets"),
        ({"levers": {"lora": "yes"}}, r"levers\.lora"),
        ({"levers": {"attention": "magic"}}, r"levers\.attention"),
    ],
)
def test_malformed_scenarios_are_value_errors_naming_the_field(change, field):
    data = {**VALID, **change}
    with pytest.raises(ValueError, match=rf"^{field}: ") as err:
        decode(data, CATALOG)
    assert type(err.value) is ValueError
    assert len(str(err.value)) < 400  # a long hostile value is quoted cut short


@pytest.mark.parametrize(
    ("data", "message"), [([1], "^scenario: must be an object"), ({"gpu": "a10"}, "^model: missing")]
)
def test_a_scenario_that_is_not_one_is_refused(data, message):
    with pytest.raises(ValueError, match=message):
        decode(data, CATALOG)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)
KEYS = ["model", "gpu", "weights", "kv", "tp", "pp", "engine", "levers", "input_len", "batch", "served_as"]


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(KEYS), JSON_VALUES, max_size=4))
def test_any_json_is_a_scenario_or_a_value_error(changes):
    with contextlib.suppress(ValueError):  # anything else fails the test
        decode({**VALID, **changes}, CATALOG)


# --- tokens -------------------------------------------------------------------------------------


def _token(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("", "not base64url"),
        ("eNrr!jj", "not base64url"),
        ("eNrNj lsK", "not base64url"),
        ("A" * 5, "not base64url"),  # no base64 text has 4n + 1 characters
        ("A" * (MAX_TOKEN_CHARS + 4), f"more than the {MAX_TOKEN_CHARS}"),
        (_token(b"hello, world"), "not zlib"),
        (_token(zlib.compress(b'{"v": 1, "s": []}')[:-6]), "cut short"),
        (_token(zlib.compress(b'{"v": 1, "s": []}') + b"junk"), "followed by other bytes"),
        (_token(zlib.compress(b" " * 10_000_000)), "inflates to more than"),
        (_token(zlib.compress(b"\xff\xfe not utf-8")), "not JSON"),
        (_token(zlib.compress(b"{'v': 1}")), "not JSON"),
        (_token(zlib.compress(b'{"v": 1, "s": [{"batch": NaN}]}')), "not JSON"),
        (_token(zlib.compress(b"[" * 100_000 + b"]" * 100_000)), "not JSON|nested deeper"),
        (_token(zlib.compress(b'{"v": 1, "s": [[[[[[[1]]]]]]]}')), "nested deeper"),
        (_token(zlib.compress(b"[1, 2]")), "not an object"),
        (_token(zlib.compress(b'{"v": 2, "s": []}')), r"^token\.v: format version 2"),
        (_token(zlib.compress(b'{"v": true, "s": []}')), r"^token\.v"),
        (_token(zlib.compress(b'{"v": 1, "s": {"model": "x"}}')), r"^token\.s"),
        (_token(zlib.compress(b'{"v": 1, "s": [1]}')), r"^token\.s"),
        (_token(zlib.compress(json.dumps({"v": 1, "s": [{}] * 65}).encode())), r"^token\.s: 65 scenarios"),
    ],
)
def test_malformed_tokens_are_value_errors(token, message):
    with pytest.raises(ValueError, match=message) as err:
        from_token(token)
    assert type(err.value) is ValueError and str(err.value).startswith("token")


def test_a_hand_written_token_decodes():
    text = b'{"v":1,"s":[{"model":"qwen3-8b","gpu":"l4","kv":"fp8","batch":8,"levers":{"attention":"eager"}}]}'
    (data,) = from_token(_token(zlib.compress(text)))
    dep, work = decode(data, CATALOG)
    assert (dep.model.id, dep.gpu.id, dep.kv.name, work.batch, dep.levers.attention) == (
        "qwen3-8b",
        "l4",
        "fp8",
        8,
        "eager",
    )


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=64) | st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"))
def test_any_text_is_a_token_or_a_value_error(text):
    with contextlib.suppress(ValueError):
        from_token(text)


def test_data_parallel_attention_rides_in_the_link():
    """A MoE layout with dp ranks round-trips; dp on a dense model is refused naming the field."""
    dep, work = scenario(model="qwen3-30b-a3b", gpu="h100-sxm")
    dep = dataclasses.replace(dep, parallel=Parallelism(tp=2, dp=4))
    assert encode(dep, work)["dp"] == 4
    assert through_token(dep, work) == (dep, work)
    dense, _ = scenario()
    with pytest.raises(ValueError, match=r"^dp: .*no routed experts"):
        decode({**encode(dense, work), "dp": 2}, CATALOG)
