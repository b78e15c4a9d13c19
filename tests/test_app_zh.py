"""With ``?lang=zh`` every page speaks Chinese: no English left in what a reader sees beyond units,
model and GPU names, code and the terms Chinese engineers use as they are (prefill, decode, batch,
token, KV cache...), no table headed by a raw field name, no "None" or "nan" in a cell.

Each page is opened in Chinese with the inputs that make it show its tables (a saved pair on
Compare, a load sweep run, the best-deployment search, a lever on), and everything it shows is
read: headings, Markdown, captions, alerts, metric labels and values, widget, tab and expander
labels, and every table's headers, index and cells.

The English check is by word: a run of ASCII words (between CJK text, in a sentence or a cell)
fails when one of its words is none of: an allowed term (:data:`ALLOWED`, case-insensitive), an
acronym (all capitals: TTFT, NCCL), a word with a digit (8B, H100, FP8) or an identifier
(snake_case, dotted, a path, a flag). Code spans, LaTeX, links' targets, HTML tags and catalog
model and GPU names are taken out first. So "USD / user-month" or "Explorer 会" fails, while
"Llama-3.1-8B", "GiB", "TPOT P99", "vLLM 启动日志" and "max_model_len" pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pandas as pd
import pytest

from core.messages import message
from core.spec.catalog import load_catalog
from tests.app_helpers import DATA, open_app

ALLOWED_WORDS = """
ms s µs us h gib mib kib gb tb mb kb gb/s tb/s tok tok/s tokens token flop flops tflops tops
usd b k m w a bit bits byte bytes
prefill decode batch batching kv cache roofline eager flash flashattention attention
lora moe mla gqa mqa mha mtp eagle ngram n-gram draft speculative all-reduce all-to-all
mamba mamba2 deltanet gated linear_attention sliding window kernel tensor core cores
nvlink pcie sxm hbm gddr sram cuda nccl infiniband rdma
vllm sglang tensorrt-llm trtllm trt-llm vllm-project
kubernetes docker compose helm chart llm-d
awq gptq mxfp nvfp w4a16 w8a8 int bf fp auto
hugging face hub config json csv html markdown api little pareto vs
prompt query block rank softmax top-k id min max
ethernet infinity fabric pagedattention leviathan dao arxiv
tp pp dp ep xpyd replica p50 p90 p95 p99 e2e itl ttft tpot slo mfu mbu ape
gpu gpus cpu cpus host
llm inference tradeoff explorer
"""
ALLOWED = set(ALLOWED_WORDS.split())
"""Words allowed anywhere, by line: units; terms Chinese engineers write as they are (prefill, batch,
KV cache, prompt, query, rank, Pareto, vs...); kernels, links, engines and formats; the deployment tools
deployment files are named for (Kubernetes, Docker Compose, a Helm chart, llm-d); file formats and
Little's law; names of links, kernels and cited authors; metric and layout abbreviations; the
product's own name ("explorer" only there: "Explorer 会..." naming the page is caught through
:data:`PAGE_NAMES`)."""
PAGE_NAMES = re.compile(r"\bExplorer\b(?! \d)")
"""The Explorer page named in English in a Chinese sentence (the tool's full name is allowed)."""
ENGINE_FLAGS = {
    "max_model_len",
    "max_num_batched_tokens",
    "max_num_seqs",
    "block_size",
    "gpu_memory_utilization",
    "mem_fraction_static",
    "kv_cache_free_gpu_memory_fraction",
}
"""Engine arguments: code, shown by their names in both languages (the sidebar's labels too)."""
SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)+$")
VERBATIM = (
    "catalog.col_id",
    "catalog.col_quantization",
    "catalog.col_host_link",
    "catalog.source",
    "val.col_id",
    "val.col_engine",
    "val.col_source_group",
)
"""Columns whose cells quote data as its source has it (ids, a checkpoint's quantization note, a
datasheet's host link, a benchmark's engine release such as "vLLM ~0.6.4 (ROCm build)", source
references): their headers say so, their cells are not checked for English."""
NULLS = {"None", "none", "nan", "NaN", "<NA>", "NaT", "null"}

CODE = re.compile(
    r"`[^`]*`|\$\$.*?\$\$|\$[^$\n]*\$|<[^>]+>|\]\([^)]*\)|https?://\S+"  # code, LaTeX, tags, links
    r"|(?<![\w-])--?[a-z][\w-]*"  # command-line flags
    r"|\b[\w.-]+:[\w./@#+~:-]+"  # source references (gh:owner/repo:path@ref)
    r"|docs/[\w/.-]+\.md(?:, [A-Z][A-Za-z -]*[a-z])?",  # a section of the English docs, cited by its title
    re.S,
)
GREEK = "\u0370-\u03ff"
WORD_RUN = re.compile(rf"[A-Za-z0-9µ{GREEK}_./+'’()\[\]:-]+(?:[ ,/&×·–-]+[A-Za-z0-9µ{GREEK}_./+'’()\[\]:-]+)*")
WORD = re.compile(rf"[A-Za-zµ{GREEK}][A-Za-z0-9µ{GREEK}_./+'’-]*")


def _names() -> re.Pattern:
    """Every catalog model's and GPU's name, id and Hugging Face id, and the providers the GPU prices
    were read from (named beside each price, issue 31), longest first."""
    catalog = load_catalog()
    names = {n for e in (*catalog.models, *catalog.gpus) for n in (e.name, e.id, getattr(e, "hf_id", None)) if n}
    names |= {g.price_provider for g in catalog.gpus if g.price_provider}  # a price's source: RunPod, Lambda
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])")  # whole names: not the t4 in int4


NAMES = _names()
"""Model and GPU names are taken out before the check (their words, "Server Edition", are names)."""


def _word_ok(word: str) -> bool:
    bare = word.strip(".:'’-/()[]")
    if not bare or len(bare) == 1:
        return True
    if bare.lower() in ALLOWED or bare in ENGINE_FLAGS:
        return True
    if any(c.isdigit() for c in bare) or re.fullmatch(r"[A-Z][A-Z0-9]+s?", bare):
        return True  # 8B, H100, FP8; TTFT, NCCL, GPUs
    if "_" in bare or "." in bare.strip(".") or "/" in bare or bare.startswith("-"):
        return True  # identifiers, paths, file names, flags, units per unit (tok/s)
    if re.fullmatch(r"[a-z]+[A-Z][A-Za-z]*", bare):
        return True  # camelCase names: vLLM, SGLang
    return all(part.lower() in ALLOWED for part in bare.split("-"))


def english_left(text: str) -> list[str]:
    """The runs of English words in ``text`` that are not units, names, code or allowed terms."""
    text = NAMES.sub(" ", CODE.sub(" ", text))
    found = [m.group(0) for m in PAGE_NAMES.finditer(text) if "Tradeoff Explorer" not in text]
    for run in WORD_RUN.finditer(text):
        if not all(_word_ok(w) for w in WORD.findall(run.group(0))):
            found.append(run.group(0))
    return found


def _walk(node) -> Iterator:
    yield node
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield from _walk(child)


def shown_text(at) -> Iterator[tuple[str, str]]:
    """(where, text) for everything a reader sees, tables excepted."""
    for node in _walk(at._tree):
        kind = getattr(node, "type", None)
        if kind in ("markdown", "caption", "title", "header", "subheader", "error", "warning", "info", "success"):
            yield kind, node.value
        elif kind == "latex":  # its words: what \\text{...} writes out
            yield kind, " · ".join(re.findall(r"\\text\{([^{}]*)\}", node.value))
        elif kind == "metric":
            yield "metric", f"{node.label}: {node.value}"
        elif getattr(node, "key", None) == "lang":
            continue  # "Language / 语言": the switch is named in both languages on purpose
        elif kind in ("tab", "expandable") or hasattr(node, "label"):
            label = getattr(node, "label", None)
            if isinstance(label, str):
                yield f"{kind} label", label


def tables(at) -> Iterator[tuple[list[str], pd.DataFrame, str]]:
    """Each table's headers as shown (a column config's label, else the column's name), its data and
    the text it shows for a missing value."""
    for node in _walk(at._tree):
        if getattr(node, "type", None) == "dataframe":
            config = json.loads(node.proto.columns or "{}")
            frame = node.value
            headers = []
            for column in frame.columns:
                entry = config.get(str(column)) or config.get(f"col:{column}") or {}
                headers.append(entry.get("label") or str(column))
            yield headers, frame, node.proto.placeholder or "None"


def problems(at) -> list[str]:
    verbatim = {zh(key) for key in VERBATIM}
    found = []
    for where, text in shown_text(at):
        found += [f"{where}: {run!r} in {text[:120]!r}" for run in english_left(text)]
    for headers, frame, placeholder in tables(at):
        for header in headers:
            if SNAKE.match(header) and header not in ENGINE_FLAGS:
                found.append(f"raw field name as a column header: {header!r}")
            found += [f"column header {header!r}: {run!r}" for run in english_left(header)]
        for label in map(str, frame.index):
            found += [f"row label {label!r}: {run!r}" for run in english_left(label)]
        if frame.isna().to_numpy().any() and placeholder in NULLS:
            found.append(f"a missing value shown as {placeholder!r} in the table headed {headers}")
        for header, column in zip(headers, frame.columns, strict=True):
            cells = {v for v in frame[column] if isinstance(v, str)}
            found += [f"a cell reads {cell!r} in column {header!r}" for cell in cells & NULLS]
            if header in verbatim:
                continue
            found += [f"a raw field name {c!r} in column {header!r}" for c in cells if SNAKE.match(c)]
            for cell in cells:
                found += [f"cell {cell[:80]!r}: {run!r}" for run in english_left(cell)]
    return sorted(set(found))


def zh(key: str, **params) -> str:
    return message(key, "zh", **params)


def _explorer(at):
    yield at
    at.number_input(key="batch").set_value(32).run()  # does not fit: the warnings and the fixes
    yield at
    for view in ("concurrency", "tradeoff", "sensitivity"):
        at.session_state["explorer_view"] = zh(f"explorer.view_{view}")
        at.run()
        yield at
    for key in ("fits", "max_concurrency", "ttft", "tpot", "throughput", "bound", "memory"):
        at.session_state[f"explain_{key}"] = True  # every explanation open: formulas and their words
    at.run()
    yield at


def _plan(at):
    yield at
    at.session_state["explain_plan"] = True  # the operating point's explanations, opened with the search
    at.selectbox(key="plan_preset").select_index(0)  # AppTest cannot map the Chinese label back
    at.toggle(key="search_on").set_value(True).run()  # the best-deployment search and its table
    yield at


def _loadtest(at):
    at.button(key="lt_run_sweep").click().run()
    yield at


def _validation(at):
    at.text_area(key="val_log").input((DATA / "vllm_startup_h100.log").read_text()).run()
    yield at


def _compare(at):
    at.button(key="save_scenario").click().run()
    at.number_input(key="batch").set_value(32).run()  # one that does not fit
    at.button(key="save_scenario").click().run()
    yield at


def _once(at):
    yield at


PAGES = {
    "pages/explorer_page.py": ({"spec": "ngram", "prefix": "512"}, _explorer),
    "pages/plan_page.py": ({}, _plan),
    "pages/loadtest_page.py": ({"lt_count": "200"}, _loadtest),
    "pages/validation_page.py": ({"gpu": "NVIDIA H100 SXM5 80GB"}, _validation),
    "pages/learn_page.py": ({}, _once),
    "pages/compare_page.py": ({}, _compare),
    "pages/catalog_page.py": ({}, _once),
    "pages/workshop_page.py": ({}, _once),
}


@pytest.mark.parametrize("page", list(PAGES))
def test_every_page_in_chinese_has_no_english_left_and_no_raw_table(page):
    query, states = PAGES[page]
    at = open_app(lang="zh", **query)
    at.switch_page(page).run()
    found: list[str] = []
    for shown in states(at):
        assert not shown.exception
        found += problems(shown)
    assert not sorted(set(found)), "\n".join(sorted(set(found)))


@pytest.mark.parametrize(
    ("text", "left"),
    [
        ("成本：USD / user-month", ["USD / user-month"]),
        ("Explorer 会把每个手段对比", ["Explorer"]),
        ("每步 ms per step", ["ms per step"]),
        ("检查 | need / limit", ["need / limit"]),
        ("Llama-3.1-8B 在 NVIDIA H100 SXM5 80GB 上，TTFT 30.4 s，TPOT 44.8 ms，154 tok/s", []),
        ("vLLM 启动日志；`--max-concurrency 16`；max_model_len 为 2,048；KV Cache 与 prefill、decode", []),
        ("由 LLM Inference Tradeoff Explorer 0.9 生成", []),
        ("$$\\text{KV/token} = 2 \\times L$$ 见 core/planning/search.py", []),
    ],
)
def test_the_english_check_catches_leftovers_not_names_units_or_terms(text, left):
    assert english_left(text) == left


def test_every_catalog_value_the_catalog_page_puts_in_words_has_its_words():
    from core.messages import load_messages
    from core.spec.model import LayerKind

    catalog = load_catalog()
    keys = {f"catalog.kind.{kind.value}" for kind in LayerKind}
    keys |= {f"catalog.basis.{gpu.memory_basis}" for gpu in catalog.gpus}
    keys |= {f"catalog.link.{gpu.interconnect}" for gpu in catalog.gpus}
    assert keys - set(load_messages()) == set()
