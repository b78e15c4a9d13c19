"""A scenario (deployment and workload) as a short JSON-able dict, and a list of them as one URL
token: what a link keeps of the Compare page's saved scenarios.

The dict names catalog entries by id and leaves out every field equal to its default:

- ``model``, ``gpu``: catalog ids; ``served_as`` and ``native_dtype``: the checkpoint a model search
  named (its repo and stored format, :meth:`core.spec.names.ModelMatch.deployed_model`) where they
  differ from the catalog's;
- ``weights``: the weight format (default: the model's native dtype); ``kv``: the KV-cache format
  (default: what ``auto`` picks on that GPU, :func:`core.spec.support.kv_for`); ``tp``, ``pp``, ``dp`` (1);
- ``engine``: ``release`` ("sglang 0.5.7"; default the current vLLM), the flags that are set (endpoint,
  backend, gpu_memory_utilization, max_model_len, max_num_batched_tokens, max_num_seqs, block_size), the
  memory overheads that differ from :class:`core.spec.engine.EngineConfig`'s [bytes], and
  ``efficiency`` when set: its factors that differ from the default for the GPU's memory class and
  release [SI units] (``{}``: set to exactly that default);
- ``levers``: ``speculative`` (method, ``draft`` model id, k, acceptance), ``prefix``, ``offload``
  [bytes], ``lora`` and ``attention``, each only when on and holding only what differs from its
  settings' defaults;
- ``input_len``, ``output_len``, ``batch`` (defaults: :class:`core.spec.deployment.Workload`'s).

A token is the JSON ``{"v": 1, "s": [dict, ...]}``, zlib-compressed, in base64url without padding
(:func:`core.spec.json_fields.pack`).
Decoding trusts nothing: a refusal is a ValueError whose message starts with the field's path.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any

from core.levers.settings import Levers, Lora, Offload, PrefixCaching, Speculative
from core.spec import json_fields
from core.spec.catalog import Catalog, load_catalog
from core.spec.deployment import Deployment, Workload, check_fits_context
from core.spec.efficiency import Efficiency, default_efficiency
from core.spec.engine import EngineConfig, Parallelism
from core.spec.gpu import GpuSpec
from core.spec.model import ModelSpec
from core.spec.precision import KV_PRECISIONS, WEIGHT_PRECISIONS, Precision
from core.spec.release import ENGINES, Release, current_release, parse_release
from core.spec.support import kv_for

FORMAT_VERSION = 1
MAX_TOKEN_CHARS = 16 * 1024
MAX_JSON_BYTES = 256 * 1024  # what a token may inflate to (a zlib bomb stops here)
MAX_DEPTH = 6  # token object > list > scenario > engine > efficiency, plus one
MAX_SCENARIOS = 64
REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")
RELEASE_TEXT = re.compile(r"([a-z]+) (\d{1,4}\.\d{1,4}\.\d{1,4})")

# kinds of the fields a dict may hold: "int", "float", "str", "object"; "?" allows null
SCENARIO_FIELDS = {
    **dict.fromkeys(("model", "served_as", "native_dtype", "gpu", "weights", "kv"), "str"),
    **dict.fromkeys(("tp", "pp", "dp", "input_len", "output_len", "batch"), "int"),
    "engine": "object",
    "levers": "object",
}
ENGINE_FLAGS = {
    "endpoint": "str",
    "backend": "str",
    "gpu_memory_utilization": "float?",
    **dict.fromkeys(("max_model_len", "max_num_batched_tokens", "max_num_seqs", "block_size"), "int?"),
}
ENGINE_BYTES = {
    "driver_reserved_bytes": "float",
    "non_torch_bytes": "float",
    "non_torch_bytes_tp": "float?",
    "cuda_graph_bytes": "float",
}
ENGINE_FIELDS = {"release": "str", **ENGINE_FLAGS, **ENGINE_BYTES, "efficiency": "object"}
EFFICIENCY_FIELDS = {  # every factor is a float; those annotated "| None" may be null
    f.name: "float?" if "None" in str(f.type) else "float" for f in dataclasses.fields(Efficiency)
}
LEVER_FIELDS = {"speculative": "object", "prefix": "object", "offload": "object", "lora": "object", "attention": "str"}
SPECULATIVE_FIELDS = {"method": "str", "draft": "str", "k": "int", "acceptance": "float"}
PREFIX_FIELDS = {"shared_tokens": "int", "hit_rate": "float"}
OFFLOAD_FIELDS = {"weights_bytes": "float", "kv_bytes": "float"}
LORA_FIELDS = {"adapters": "int", "rank": "int", "targets": "str"}


def _defaults(cls: type) -> dict[str, Any]:
    """A dataclass's field defaults (fields with a default factory left out)."""
    return {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}


def _changed(obj: Any, baseline: dict[str, Any], names) -> dict[str, Any]:
    """The fields of ``obj`` among ``names`` whose value differs from ``baseline``'s."""
    return {name: value for name in names if (value := getattr(obj, name)) != baseline[name]}


# --- encoding ----------------------------------------------------------------------------------


def _catalog_model(model: ModelSpec, catalog: Catalog, what: str, searched: bool = False) -> ModelSpec:
    """The catalog's model of ``model``'s id, which ``model`` must be (up to the checkpoint a search
    named, its repo and stored format, when ``searched``); ValueError naming it otherwise (a model
    imported in the session)."""
    base = next((m for m in catalog.models if m.id == model.id), None)
    if base is not None and searched:
        base = dataclasses.replace(base, hf_id=model.hf_id, native_dtype=model.native_dtype)
    if base != model:
        raise ValueError(f"{what} {model.name!r} ({model.id}) is not in the catalog, so a link cannot name it")
    return next(m for m in catalog.models if m.id == model.id)


def _listed(precision: Precision, table: dict[str, Precision], what: str) -> str:
    if table.get(precision.name) != precision:
        raise ValueError(f"{what} format {precision.label!r} is not one of {', '.join(table)}")
    return precision.name


def encode(dep: Deployment, work: Workload, catalog: Catalog | None = None) -> dict[str, Any]:
    """``dep`` and ``work`` as the dict of the module docstring; ValueError naming the model, draft
    or GPU that is not the catalog's (a custom one cannot be named by id)."""
    catalog = catalog or load_catalog()
    base = _catalog_model(dep.model, catalog, "model", searched=True)
    out: dict[str, Any] = {"model": dep.model.id}
    if dep.model.hf_id != base.hf_id:
        out["served_as"] = dep.model.hf_id
    if dep.model.native_dtype != base.native_dtype:
        out["native_dtype"] = dep.model.native_dtype
    if next((g for g in catalog.gpus if g.id == dep.gpu.id), None) != dep.gpu:
        raise ValueError(f"GPU {dep.gpu.name!r} ({dep.gpu.id}) is not in the catalog, so a link cannot name it")
    out["gpu"] = dep.gpu.id
    weights = _listed(dep.weights, WEIGHT_PRECISIONS, "weight")
    if weights != dep.model.native_dtype:
        out["weights"] = weights
    kv = _listed(dep.kv, KV_PRECISIONS, "KV-cache")
    if dep.kv != kv_for("auto", dep.weights, dep.gpu):
        out["kv"] = kv
    out |= _changed(dep.parallel, _defaults(Parallelism), ("tp", "pp", "dp"))
    if engine := _encode_engine(dep.engine, dep.gpu):
        out["engine"] = engine
    if levers := _encode_levers(dep.levers, catalog):
        out["levers"] = levers
    return out | _changed(work, _defaults(Workload), ("input_len", "output_len", "batch"))


def _encode_engine(engine: EngineConfig, gpu: GpuSpec) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if engine.release != current_release():
        out["release"] = f"{engine.release.engine} {engine.release.number}"
    out |= _changed(engine, _defaults(EngineConfig), (*ENGINE_FLAGS, *ENGINE_BYTES))
    if engine.efficiency is not None:
        baseline = default_efficiency(gpu.memory_type, engine.release)
        out["efficiency"] = _changed(engine.efficiency, dataclasses.asdict(baseline), EFFICIENCY_FIELDS)
    return out


def _encode_levers(levers: Levers, catalog: Catalog) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if (spec := levers.speculative) is not None:
        out["speculative"] = _changed(spec, _defaults(Speculative), ("method", "k", "acceptance"))
        if spec.draft is not None:
            out["speculative"]["draft"] = _catalog_model(spec.draft, catalog, "draft model").id
    for name, cls, names in (("prefix", PrefixCaching, PREFIX_FIELDS), ("offload", Offload, OFFLOAD_FIELDS)):
        if changed := _changed(getattr(levers, name), _defaults(cls), names):
            out[name] = changed
    if levers.lora is not None:
        out["lora"] = _changed(levers.lora, _defaults(Lora), LORA_FIELDS)
    return out | _changed(levers, _defaults(Levers), ("attention",))


# --- decoding ----------------------------------------------------------------------------------


def _by_id(entries, ref: str, path: str):
    found = next((entry for entry in entries if entry.id == ref), None)
    if found is None:
        raise ValueError(f"{path}: {json_fields.show(ref)} is not in the catalog")
    return found


def _precision(name: str, table: dict[str, Precision], path: str) -> Precision:
    if name not in table:
        raise ValueError(f"{path}: {json_fields.show(name)} is not one of {', '.join(table)}")
    return table[name]


def decode(data: Any, catalog: Catalog) -> tuple[Deployment, Workload]:
    """The scenario ``data`` (:func:`encode`'s dict) describes, rebuilt from ``catalog`` and checked
    as the sidebar checks it (a request longer than max_model_len is refused too); ValueError
    whose message starts with the path of the field at fault."""
    top = json_fields.fields(data, SCENARIO_FIELDS, "", top="scenario")
    for required in ("model", "gpu"):
        if required not in top:
            raise ValueError(f"{required}: missing")
    model = _by_id(catalog.models, top["model"], "model")
    if "served_as" in top:
        if not REPO_ID.fullmatch(top["served_as"]):
            raise ValueError(f"served_as: {json_fields.show(top['served_as'])} is not a repo id")
        with json_fields.field("served_as"):
            model = dataclasses.replace(model, hf_id=top["served_as"])
    if "native_dtype" in top:
        native = _precision(top["native_dtype"], WEIGHT_PRECISIONS, "native_dtype").name
        with json_fields.field("native_dtype"):
            model = dataclasses.replace(model, native_dtype=native)
    gpu = _by_id(catalog.gpus, top["gpu"], "gpu")
    weights = _precision(top.get("weights", model.native_dtype), WEIGHT_PRECISIONS, "weights")
    kv = _precision(top["kv"], KV_PRECISIONS, "kv") if "kv" in top else kv_for("auto", weights, gpu)
    parallel = json_fields.built(
        Parallelism, {name: top[name] for name in ("tp", "pp", "dp") if name in top}, top="parallel"
    )
    if (problem := parallel.data_parallel_error(model)) is not None:
        raise ValueError(f"dp: {problem}")
    engine = _engine(top.get("engine", {}), gpu)
    levers = _levers(top.get("levers", {}), catalog)
    with json_fields.field("deployment"):
        dep = Deployment(model=model, gpu=gpu, weights=weights, kv=kv, parallel=parallel, engine=engine, levers=levers)
    lengths = {name: top[name] for name in ("input_len", "output_len", "batch") if name in top}
    work = json_fields.built(Workload, lengths, top="workload")
    with json_fields.field("input_len + output_len"):
        check_fits_context(dep, work)
    return dep, work


def _release(text: str) -> Release:
    match = RELEASE_TEXT.fullmatch(text)
    if match is None or match.group(1) not in ENGINES:
        raise ValueError(f"engine.release: {json_fields.show(text)} is not an engine ({', '.join(ENGINES)}) and x.y.z")
    with json_fields.field("engine.release"):
        return parse_release(*match.groups())


def _engine(raw: Any, gpu: GpuSpec) -> EngineConfig:
    values = json_fields.fields(raw, ENGINE_FIELDS, "engine")
    release = _release(values.pop("release")) if "release" in values else current_release()
    efficiency = None
    if "efficiency" in values:
        chosen = json_fields.fields(values.pop("efficiency"), EFFICIENCY_FIELDS, "engine.efficiency")
        baseline = default_efficiency(gpu.memory_type, release)
        efficiency = json_fields.built(functools.partial(dataclasses.replace, baseline), chosen, "engine.efficiency")
    return json_fields.built(functools.partial(EngineConfig, release=release, efficiency=efficiency), values, "engine")


def _levers(raw: Any, catalog: Catalog) -> Levers:
    values = json_fields.fields(raw, LEVER_FIELDS, "levers")
    settings: dict[str, Any] = {}
    if "speculative" in values:
        spec = json_fields.fields(values["speculative"], SPECULATIVE_FIELDS, "levers.speculative")
        if "draft" in spec:
            spec["draft"] = _by_id(catalog.models, spec["draft"], "levers.speculative.draft")
        with json_fields.field("levers.speculative"):
            settings["speculative"] = Speculative(**spec)
    for name, cls, schema in (
        ("prefix", PrefixCaching, PREFIX_FIELDS),
        ("offload", Offload, OFFLOAD_FIELDS),
        ("lora", Lora, LORA_FIELDS),
    ):
        if name in values:
            settings[name] = json_fields.built(
                cls, json_fields.fields(values[name], schema, f"levers.{name}"), f"levers.{name}"
            )
    with json_fields.field("levers.attention"):
        return Levers(**settings, attention=values.get("attention", "flash"))


# --- tokens ------------------------------------------------------------------------------------


def to_token(scenarios: list[dict[str, Any]]) -> str:
    """``scenarios`` as one URL-safe token: compact JSON, zlib, base64url without padding."""
    return json_fields.pack({"v": FORMAT_VERSION, "s": scenarios}, MAX_TOKEN_CHARS)


def from_token(token: Any) -> list[dict[str, Any]]:
    """The scenario dicts of a :func:`to_token` token (each still to :func:`decode`); ValueError
    naming ``token`` for text that is too long, not base64url, zlib or JSON, or not shaped so."""
    payload = json_fields.unpack(token, MAX_TOKEN_CHARS, MAX_JSON_BYTES, MAX_DEPTH)
    if not isinstance(payload, dict) or set(payload) != {"v", "s"}:
        raise ValueError('token: not an object of "v" (format version) and "s" (scenarios)')
    if type(payload["v"]) is not int or payload["v"] != FORMAT_VERSION:
        raise ValueError(f"token.v: format version {json_fields.show(payload['v'])} is not {FORMAT_VERSION}")
    scenarios = payload["s"]
    if not isinstance(scenarios, list) or not all(isinstance(item, dict) for item in scenarios):
        raise ValueError("token.s: must be a list of scenario objects")
    if len(scenarios) > MAX_SCENARIOS:
        raise ValueError(f"token.s: {len(scenarios)} scenarios, more than {MAX_SCENARIOS}")
    return scenarios
