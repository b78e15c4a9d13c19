"""Load the built-in catalogs in ``data/`` into typed specs, and resolve user model references.

One TOML file per model (``data/models/<id>.toml``: source, published counts and a verbatim
``[config]`` subset of the upstream config.json, read by :mod:`core.spec.hf_config`) and per GPU
(``data/gpus/<id>.toml``: datasheet figures in the units vendors print, converted to SI here).
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.spec import DATA_DIR, units
from core.spec.gpu import GpuSpec
from core.spec.gpu_names import match_gpu
from core.spec.hf_config import model_from_config, read_config, unread_dtype
from core.spec.hub import HubError, fetch_with_config, looks_like_repo_id
from core.spec.local_file import is_local_file
from core.spec.model import ModelSpec
from core.spec.names import ModelMatch, closest_models, find_models, pick_match, unknown_model


class CatalogError(ValueError):
    """A catalog file that is missing a field or holds an invalid value."""


@dataclass(frozen=True)
class Catalog:
    models: tuple[ModelSpec, ...]
    gpus: tuple[GpuSpec, ...]

    def model(self, ref: str) -> ModelSpec:
        """A catalog model by exactly its id or Hugging Face id, case-insensitively (see
        :func:`resolve` for names as people type them)."""
        key = ref.strip().lower()
        for model in self.models:
            if key in (model.id.lower(), model.hf_id.lower()):
                return model
        raise KeyError(ref)

    def gpu(self, ref: str) -> GpuSpec:
        """A catalog GPU by exactly its id or name, case-insensitively (see :func:`resolve_gpu` for
        names as people type them)."""
        key = ref.strip().lower()
        for gpu in self.gpus:
            if key in (gpu.id.lower(), gpu.name.lower()):
                return gpu
        raise KeyError(ref)


@functools.cache
def load_catalog(data_dir: Path = DATA_DIR) -> Catalog:
    """Every model and GPU under ``data_dir``, sorted by id (read once per directory; specs are frozen)."""
    models = tuple(load_model_file(p) for p in sorted((data_dir / "models").glob("*.toml")))
    gpus = tuple(load_gpu_file(p) for p in sorted((data_dir / "gpus").glob("*.toml")))
    for kind, specs in (("model", models), ("gpu", gpus)):
        ids = [s.id for s in specs]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise CatalogError(f"duplicate {kind} ids: {', '.join(duplicates)}")
    return Catalog(models=models, gpus=gpus)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as err:
        raise CatalogError(f"{path.name}: {err}") from None


def _get(entry: dict[str, Any], key: str, path: Path) -> Any:
    if key not in entry:
        raise CatalogError(f"{path.name}: missing field {key!r}")
    return entry[key]


def load_model_file(path: Path) -> ModelSpec:
    entry = _read_toml(path)
    model_id = _get(entry, "id", path)
    if model_id != path.stem:
        raise CatalogError(f"{path.name}: id {model_id!r} does not match the file name")
    try:
        return model_from_config(
            _get(entry, "config", path),
            id=model_id,
            name=_get(entry, "name", path),
            hf_id=_get(entry, "hf_id", path),
            source_url=_get(entry, "source_url", path),
            source_read=_get(entry, "source_read", path),
            params_total_published=float(_get(entry, "params_total", path)),
            params_active_published=float(entry["params_active"]) if "params_active" in entry else None,
            params_active_excludes_embedding=entry.get("params_active_excludes_embedding", False),
            params_source_url=_get(entry, "params_source_url", path),
            notes=entry.get("notes", ""),
        )
    except ValueError as err:
        raise CatalogError(f"{path.name}: {err}") from None


def load_gpu_file(path: Path) -> GpuSpec:
    entry = _read_toml(path)
    gpu_id = _get(entry, "id", path)
    if gpu_id != path.stem:
        raise CatalogError(f"{path.name}: id {gpu_id!r} does not match the file name")
    link = entry.get("interconnect", {})
    host = _get(entry, "host_link", path)
    price = entry.get("price", {})
    power = entry.get("power", {})
    tflops = _get(entry, "tensor_tflops_dense", path)
    compute = _get(entry, "compute", path)
    basis = entry.get("memory_mib_reported_basis", "driver")
    try:
        return GpuSpec(
            id=gpu_id,
            name=_get(entry, "name", path),
            vendor=_get(entry, "vendor", path),
            architecture=entry.get("architecture", ""),
            form_factor=entry.get("form_factor", ""),
            memory_type=_get(entry, "memory_type", path),
            memory_bytes=float(_get(entry, "memory_mib_reported", path)) * units.MiB,
            memory_bytes_datasheet=float(_get(entry, "memory_gb", path)) * units.GB,
            memory_basis=basis,
            memory_source_url=entry.get("memory_reported_source_url", ""),
            memory_bandwidth=float(_get(entry, "memory_bandwidth_gb_s", path)) * units.GB,
            tensor_flops=tuple(sorted((k, float(v) * units.TERA) for k, v in tflops.items())),
            interconnect=link.get("kind", "none"),
            interconnect_generation=link.get("generation", ""),
            link_bandwidth_bidirectional=float(link.get("bandwidth_gb_s_bidirectional", 0)) * units.GB,
            host_link_generation=_get(host, "generation", path),
            host_link_bandwidth_bidirectional=float(_get(host, "bandwidth_gb_s_bidirectional", path)) * units.GB,
            host_link_source_url=_get(host, "source_url", path),
            compute_capability=str(compute.get("capability") or compute.get("target") or ""),
            compute_source_url=_get(compute, "source_url", path),
            price_per_hour=price.get("usd_per_gpu_hour"),
            price_provider=price.get("provider", ""),
            price_source_url=price.get("source_url", ""),
            price_read=price.get("source_read"),
            source_url=_get(entry, "source_url", path),
            source_read=_get(entry, "source_read", path),
            notes=entry.get("notes", ""),
            tdp_w=float(power["tdp_w"]) if "tdp_w" in power else None,
            idle_w=float(power["idle_w"]) if "idle_w" in power else None,
            power_source_url=power.get("source_url", ""),
            idle_source_url=power.get("idle_source_url", ""),
            idle_rule=power.get("idle_rule", ""),
        )
    except (TypeError, ValueError) as err:
        raise CatalogError(f"{path.name}: {err}") from None


def resolve(ref: str, catalog: Catalog, *, online: bool = False) -> ModelMatch:
    """What ``ref`` names: a catalog model by id, name or Hugging Face id (case-insensitive), a repo
    derived from one (an instruct tune, a dated release, a quantized upload: :mod:`core.spec.names`),
    or a path to a config.json (the CLI's: the file is on its operator's machine; the dashboard never
    calls this with what a visitor types); with ``online``, any other repo id's config.json from the
    Hub (:mod:`core.spec.hub`). Raises :class:`core.spec.suggestions.UnknownName` (a ValueError) with the
    models it could mean or the closest ones; never takes a merely similar name."""
    found, how = find_models(ref, catalog.models)
    if how == "id":
        return ModelMatch(typed=ref, model=found[0], how=how)
    path = Path(ref)
    if path.suffix == ".json" or is_local_file(ref):  # the operator's own file (the CLI's machine)
        name = path.stem if path.stem != "config" else path.parent.name or "custom"
        config = read_config(path)
        model = model_from_config(config, id=name)
        return ModelMatch(typed=ref, model=model, how="config", unread_dtype=unread_dtype(config))
    match = pick_match(ref, found, how)
    if match is not None:
        return match
    if found or not (online and looks_like_repo_id(ref)):
        raise unknown_model(ref, catalog.models)
    try:
        model, config = fetch_with_config(ref)
        return ModelMatch(typed=ref, model=model, how="hub", unread_dtype=unread_dtype(config))
    except HubError as err:
        near = ", ".join(m.id for m in closest_models(ref, catalog.models))
        hint = f" (closest in the catalog: {near})" if near else ""
        raise ValueError(f"model {ref!r} is not in the catalog{hint} and {err}") from None


def resolve_model(ref: str, catalog: Catalog) -> ModelSpec:
    """The model ``ref`` names (:func:`resolve`)."""
    return resolve(ref, catalog).model


def resolve_gpu(ref: str, catalog: Catalog) -> GpuSpec:
    """The catalog GPU ``ref`` names: its id or name, or a name as people type it (``h100``,
    ``rtx4090``: :mod:`core.spec.gpu_names`). Raises :class:`core.spec.suggestions.UnknownName` (a
    ValueError) with the GPUs it could mean or the closest ones."""
    return match_gpu(ref, catalog.gpus)
