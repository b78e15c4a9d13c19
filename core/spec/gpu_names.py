"""GPU names as people type them: ``h100``, ``H100 80GB``, ``h100-sxm5``, ``rtx4090``, ``4090``,
``nvidia a10``.

A name is read as three parts, the same way for what is typed and for each catalog GPU's id and name:

- the memory size, where a token states it (``80gb``, ``80 GB``, ``80g``) [GB, as datasheets print it];
- the form factor, where a token states it (``sxm``, ``sxm5``, ``hgx``, ``pcie``, ``nvl``, ``oam``);
- the chip: every other token, written together, after dropping remarks in parentheses and the
  vendor and product-line words (nvidia, geforce, tesla, rtx, amd, instinct, intel, ...), also where
  glued to the chip (``RTX 4090``, ``rtx4090`` and ``4090`` are chip ``4090``; ``Gaudi 3`` is ``gaudi3``).

The rule, in order:

1. a catalog id or name as it stands (case-insensitive) resolves;
2. else the catalog GPUs with the typed chip that agree with every part the name states: exactly one
   resolves (``H100 SXM5`` -> h100-sxm, ``nvidia a10`` -> a10, ``4090`` -> rtx-4090);
3. when several agree and the name states no form factor, the one SXM board among them resolves:
   SXM is the flagship board of a data-centre chip, the one its spec sheet and the clouds mean by the
   bare chip (``h100`` and ``H100 80GB`` -> h100-sxm). A memory size the name leaves open is never
   chosen: ``a100`` fits two SXM boards (40 and 80 GB) and stays ambiguous;
4. otherwise nothing resolves. The GPUs with the chip (SXM first, larger memory first) or else the
   closest chips by edit distance (:func:`core.spec.suggestions.likeness`) are offered, at most three.

No per-name table: a new catalog file is found by the same rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.spec import units
from core.spec.gpu import GpuSpec
from core.spec.suggestions import MAX_TYPED, SUGGESTIONS, UnknownName, closest

VENDOR_WORDS = ("nvidia", "geforce", "tesla", "quadro", "rtx", "amd", "instinct", "radeon", "intel", "habana")
"""Words that name the maker or product line, not the chip (dropped, also glued to it: rtx4090)."""
FORM_FACTORS = {"sxm": "sxm", "hgx": "sxm", "pcie": "pcie", "pci": "pcie", "nvl": "nvl", "oam": "oam"}
"""A form-factor word (any generation digit after it: sxm5) -> the catalog's ``form_factor``."""
FLAGSHIP_FORM = "sxm"
REMARK = re.compile(r"\([^()]*\)")
"""A remark in parentheses, innermost first: each "(" is read up to the next parenthesis only, so a
name of many "(" takes linear time (``[^)]*`` read each to the end: 100,000 took 11 s, issue 29)."""
MEMORY = re.compile(r"(?<![a-z0-9.])(\d+)\s*(?:gb|gib|g)(?![a-z0-9])")
"""80GB, 80 GB, 80g: a memory size (not the g of a10g: a letter before the digits)."""
SEPARATORS = re.compile(r"[\s_\-/,.:+]+")
FORM = re.compile(rf"^({'|'.join(FORM_FACTORS)})\d*$")


@dataclass(frozen=True)
class GpuName:
    """A GPU name read as its chip, memory size [GB] and form factor (None: the name does not say)."""

    chip: str
    memory_gb: int | None = None
    form: str | None = None


def read_name(text: str) -> GpuName:
    """``NVIDIA H100 SXM5 80GB`` -> chip h100, 80 GB, sxm."""
    text = REMARK.sub(" ", text.lower())
    sizes = [int(m) for m in MEMORY.findall(text)]
    text = MEMORY.sub(" ", text)
    chip, forms = [], []
    for token in SEPARATORS.split(text):
        if form := FORM.match(token):
            forms.append(FORM_FACTORS[form.group(1)])
        elif token := _without_vendor(token):
            chip.append(token)
    return GpuName(chip="".join(chip), memory_gb=sizes[-1] if sizes else None, form=forms[-1] if forms else None)


def _without_vendor(token: str) -> str:
    """The token with any leading vendor or product-line words removed (``rtx4090`` -> ``4090``)."""
    stripped = True
    while stripped:
        stripped = False
        for word in VENDOR_WORDS:
            if token.startswith(word):
                token, stripped = token[len(word) :], True
    return token


def _keys(gpu: GpuSpec) -> list[GpuName]:
    """What a catalog GPU answers to: its id and name read as above, the memory and form factor
    completed from the catalog's figures."""
    memory = round(gpu.memory_bytes_datasheet / units.GB)
    form = gpu.form_factor or None
    keys = []
    for text in (gpu.id, gpu.name):
        name = read_name(text)
        keys.append(GpuName(chip=name.chip, memory_gb=memory, form=name.form or form))
    return keys


def _agrees(typed: GpuName, key: GpuName) -> bool:
    return (
        typed.chip == key.chip
        and typed.memory_gb in (None, key.memory_gb)
        and (typed.form is None or typed.form == key.form)
    )


def _flagship_first(gpu: GpuSpec) -> tuple:
    return (gpu.form_factor != FLAGSHIP_FORM, -gpu.memory_bytes_datasheet, gpu.id)


def find_gpus(text: str, gpus: Iterable[GpuSpec]) -> tuple[list[GpuSpec], str]:
    """The catalog GPUs ``text`` may mean and how: ``(one, 'id')``, ``(one, 'name')`` (rule 2 or 3
    above), ``(several, 'ambiguous')``, ``(closest, 'closest')`` or ``([], '')``."""
    gpus = list(gpus)
    if len(text) > MAX_TYPED:
        return [], ""
    key = text.strip().lower()
    exact = [g for g in gpus if key in (g.id.lower(), g.name.lower())]
    if exact:
        return exact[:1], "id"
    typed = read_name(text)
    if not typed.chip:
        return [], ""
    fitting = sorted((g for g in gpus if any(_agrees(typed, k) for k in _keys(g))), key=_flagship_first)
    if len(fitting) == 1:
        return fitting, "name"
    if fitting:
        flagship = [g for g in fitting if g.form_factor == FLAGSHIP_FORM]
        if typed.form is None and len(flagship) == 1:
            return flagship, "name"
        return fitting, "ambiguous"
    same_chip = sorted((g for g in gpus if any(k.chip == typed.chip for k in _keys(g))), key=_flagship_first)
    if same_chip:  # the chip is right, a stated memory size or form factor is not: offer the chip's boards
        return same_chip[:SUGGESTIONS], "closest"
    entries = ((g, [k.chip for k in _keys(g)]) for g in sorted(gpus, key=_flagship_first))
    return closest(typed.chip, entries), "closest"


def match_gpu(text: str, gpus: Sequence[GpuSpec]) -> GpuSpec:
    """The catalog GPU ``text`` names (see the module's rule); raises :class:`UnknownName` with the
    GPUs it could mean or the closest ones."""
    found, how = find_gpus(text, gpus)
    if how in ("id", "name"):
        return found[0]
    raise UnknownName("gpu", text, [g.id for g in found], ambiguous=how == "ambiguous", known=len(gpus))
