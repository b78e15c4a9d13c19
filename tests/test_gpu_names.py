"""GPU names as people type them (core/spec/gpu_names.py): resolved by the documented rule, or
offered as 1-3 catalog ids, never matched by likeness alone."""

from __future__ import annotations

import json

import pytest

from core.spec.catalog import load_catalog, resolve_gpu
from core.spec.gpu_names import find_gpus, read_name
from core.spec.suggestions import UnknownName

RESOLVED = [
    ("h100", "h100-sxm"),  # rule 3: the one SXM board of the chip
    ("H100 80GB", "h100-sxm"),  # the PCIe card is 80 GB too: the SXM board
    ("h100-sxm5", "h100-sxm"),
    ("NVIDIA H100 SXM5 80GB", "h100-sxm"),  # the catalog's name as it stands
    ("H100 PCIe", "h100-pcie"),
    ("h100 nvl", "h100-nvl"),
    ("h100 94gb", "h100-nvl"),
    ("rtx4090", "rtx-4090"),
    ("4090", "rtx-4090"),
    ("GeForce RTX 4090", "rtx-4090"),
    ("rtx 4090 d", "rtx-4090d"),
    ("a10g", "a10g"),
    ("NVIDIA A10G (AWS)", "a10g"),
    ("nvidia a10", "a10"),
    ("A10", "a10"),
    ("a100 80gb", "a100-80gb"),  # the SXM board of the two 80 GB ones
    ("a100 80gb sxm", "a100-80gb"),
    ("a100 40gb", "a100-40gb"),
    ("a100 pcie", "a100-80gb-pcie"),
    ("v100 32gb", "v100-32gb"),
    ("Tesla T4", "t4"),
    ("L40S", "l40s"),
    ("l40", "l40"),
    ("a6000", "rtx-a6000"),
    ("4060 ti", "rtx-4060-ti-16gb"),
    ("gaudi3", "gaudi-3"),
    ("AMD MI300X", "mi300x"),
    ("h200", "h200"),
]


@pytest.mark.parametrize(("typed", "gpu"), RESOLVED)
def test_names_people_type_resolve(catalog, typed, gpu):
    assert resolve_gpu(typed, catalog).id == gpu


AMBIGUOUS = [
    ("a100", ["a100-80gb", "a100-40gb", "a100-80gb-pcie"]),  # two SXM boards: the memory is not guessed
    ("v100", ["v100-32gb", "v100-16gb"]),
    ("v100 sxm2", ["v100-32gb", "v100-16gb"]),  # the form stated, the memory still open
]


@pytest.mark.parametrize(("typed", "offered"), AMBIGUOUS)
def test_a_chip_with_several_boards_is_not_guessed(catalog, typed, offered):
    with pytest.raises(UnknownName) as caught:
        resolve_gpu(typed, catalog)
    err = caught.value
    assert err.ambiguous and list(err.ids) == offered  # SXM first, larger memory first
    assert str(err).startswith(f"GPU '{typed}' could be any of: {offered[0]}")


SUGGESTED = [
    ("h10", ["h100-sxm", "h100-nvl", "h100-pcie"]),
    ("mi300", ["mi300x"]),
    ("rtx 6000", ["rtx-a6000", "rtx-pro-6000", "rtx-6000-ada"]),
    ("h100sxm", ["h100-sxm", "h100-nvl", "h100-pcie"]),
    ("rtx4090x", ["rtx-4090", "rtx-4090d"]),
    ("h200 nvl", ["h200"]),  # the chip is right, the board is not in the catalog
    ("B200 192GB", ["b200"]),  # the catalog's B200 is 180 GB
]


@pytest.mark.parametrize(("typed", "offered"), SUGGESTED)
def test_a_name_that_fits_none_only_suggests(catalog, typed, offered):
    assert find_gpus(typed, catalog.gpus)[1] == "closest"
    with pytest.raises(UnknownName) as caught:
        resolve_gpu(typed, catalog)
    err = caught.value
    assert not err.ambiguous and list(err.ids) == offered
    assert str(err) == (
        f"unknown GPU '{typed}'; did you mean "
        + (", ".join(offered[:-1]) + " or " if len(offered) > 1 else "")
        + f"{offered[-1]}? (`python -m core list gpus` lists all {len(catalog.gpus)})"
    )


def test_nothing_alike_offers_nothing(catalog):
    with pytest.raises(UnknownName, match=r"^unknown GPU 'nope': not a catalog GPU id or name") as caught:
        resolve_gpu("nope", catalog)
    assert caught.value.ids == ()


def test_read_name_takes_apart_memory_form_and_chip():
    assert read_name("NVIDIA H100 SXM5 80GB") == read_name("h100-sxm5-80g")
    name = read_name("H100 80 GB")
    assert (name.chip, name.memory_gb, name.form) == ("h100", 80, None)
    assert read_name("a10g").chip == "a10g" and read_name("a10g").memory_gb is None  # the g is not a size
    assert read_name("RTX PRO 6000 Blackwell (Server Edition)").chip == "pro6000blackwell"


@pytest.mark.parametrize("gpu", [g.id for g in load_catalog().gpus])
def test_every_catalog_gpu_answers_to_its_id_and_name(catalog, gpu):
    spec = catalog.gpu(gpu)
    assert resolve_gpu(spec.id.upper(), catalog) is spec
    assert resolve_gpu(f" {spec.name} ", catalog) is spec
    assert resolve_gpu(spec.id.replace("-", " "), catalog) is spec  # the id's words, spaced


@pytest.mark.parametrize("command", ["estimate", "check", "simulate"])
def test_every_cli_command_reads_gpu_names_and_says_which_it_took(cli, command):
    load = {"check": ["--users", "5"], "simulate": ["--users", "5", "--num-requests", "20"]}.get(command, [])
    code, out, err = cli(command, "--model", "llama-3.1-8b", "--gpu", "h100", *load)
    assert code == 0, err
    assert out.splitlines()[1] == "GPU: h100 -> NVIDIA H100 SXM5 80GB (h100-sxm)"
    code, out, _ = cli(command, "--model", "llama-3.1-8b", "--gpu", "h100-sxm", *load)
    assert not out.splitlines()[1].startswith("GPU:")  # an id needs no word
    code, out, err = cli(command, "--model", "llama-3.1-8b", "--gpu", "a100", *load)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err == (
        "error: GPU 'a100' could be any of: a100-80gb, a100-40gb or a100-80gb-pcie; name one of them "
        "(`python -m core list gpus` lists all 42)\n"
    )


def test_search_takes_gpu_names_and_names_the_closest_on_a_typo(cli):
    code, out, err = cli("search", "--model", "llama-3.1-8b", "--gpus", "h100,4090", "--users", "5", "--json")
    assert code == 0, err
    assert {p["gpu"] for p in json.loads(out)["pareto"]} <= {"h100-sxm", "rtx-4090"}
    code, out, err = cli("search", "--model", "llama-3.1-8b", "--gpus", "h100,rtx4090x", "--users", "5")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error: --gpus: unknown GPU 'rtx4090x'; did you mean rtx-4090 or rtx-4090d?")
