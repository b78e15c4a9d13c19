"""The workshop handout: every exercise with its scenario, question and hint, and optionally the
answer the tool derives, as Markdown or as one self-contained printable HTML file (no external
assets), in English or Chinese."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence

from core.estimate.provenance import generated_at, tool_version
from core.messages import message
from core.spec.catalog import Catalog, load_catalog
from core.teaching.answers import answer, page_query
from core.teaching.exercises import Exercise, is_loopback, load_exercises
from core.teaching.text import Answer, Table

FILE_STEM = "llm-workshop"
ANSWER_KEY = "answers"
"""Part of the file name of the handout with the answers, so the two never share a name."""
MIME_TYPES = {"md": "text/markdown", "html": "text/html"}
ANSWER_LINES = 6
"""Blank lines left for the student's answer when the handout has none."""
STYLE = (
    "body{font-family:system-ui,'Noto Sans CJK SC','PingFang SC','Microsoft YaHei',sans-serif;"
    "max-width:900px;margin:2em auto;padding:0 1em;line-height:1.5;color:#111}"
    "section{border-top:2px solid #111;margin-top:2em;padding-top:.5em;break-inside:avoid-page}"
    "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #d1d5db;padding:2px 8px;text-align:left}"
    ".meta{color:#4b5563;font-size:.9em}.box{border:1px solid #9ca3af;height:9em;margin:.5em 0}"
    ".note{border-left:4px solid #b45309;padding-left:.5em}"
    "a{color:#1d4ed8;word-break:break-all}"
    "@media print{body{margin:0;max-width:none}a{color:#111}section{break-inside:avoid-page}}"
)


def scenario_words(ex: Exercise, lang: str, catalog: Catalog | None = None) -> str:
    """The exercise's scenario in one sentence."""
    dep, work = ex.scenario.build(catalog or load_catalog())
    return message(
        "workshop.scenario_line",
        lang,
        model=dep.model.name,
        gpus=dep.parallel.num_gpus,
        gpu=dep.gpu.name,
        weights=dep.weights.label,
        kv=dep.kv.label,
        input=f"{work.input_len:,}",
        output=f"{work.output_len:,}",
        batch=work.batch,
        max_model_len=f"{dep.max_model_len:,}",
    )


def file_name(ext: str, lang: str, with_answers: bool) -> str:
    """The handout's file name: the answer key's apart from the students', with the language
    ("llm-workshop-en.html", "llm-workshop-answers-zh.md")."""
    return "-".join([FILE_STEM, *([ANSWER_KEY] if with_answers else []), lang]) + f".{ext}"


def printed_root(root: str) -> str:
    """The address the handout's links start with: ``root``, or "" (no links) when it opens only
    on the teacher's computer (:func:`~core.teaching.exercises.is_loopback`)."""
    return "" if is_loopback(root) else root


def _loopback_note(root: str, lang: str) -> str | None:
    """Why the handout has no links, when the app's address was loopback."""
    return message("workshop.handout_loopback", lang, address=root) if is_loopback(root) else None


def exercise_link(ex: Exercise, root: str, lang: str, catalog: Catalog | None = None) -> str:
    """The link that opens the answering page with the exercise's scenario."""
    return ex.links(root, lang, page_query(ex, catalog))["page"]


def _parts(
    lang: str, root: str, with_answers: bool, exercises: Sequence[Exercise], catalog: Catalog | None
) -> list[tuple[Exercise, str, str | None, Answer | None]]:
    """(exercise, scenario in words, link or None, answer or None) for each exercise."""
    root = printed_root(root)
    return [
        (
            ex,
            scenario_words(ex, lang, catalog),
            exercise_link(ex, root, lang, catalog) if root else None,
            answer(ex, catalog) if with_answers else None,
        )
        for ex in exercises
    ]


def _cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def markdown_steps(ans: Answer, lang: str = "en") -> list[str]:
    """An answer's steps as Markdown blocks: a paragraph each, tables as pipe tables."""
    blocks = []
    for step in ans.steps:
        if isinstance(step, Table):
            head, rows = step.render(lang)
            lines = ["| " + " | ".join(map(_cell, head)) + " |", "|" + "---|" * len(head)]
            lines += ["| " + " | ".join(map(_cell, row)) + " |" for row in rows]
            blocks.append("\n".join(lines))
        else:
            blocks.append(step.render(lang))
    return blocks


def markdown_handout(
    lang: str = "en",
    with_answers: bool = False,
    root: str = "",
    exercises: Sequence[Exercise] | None = None,
    catalog: Catalog | None = None,
) -> str:
    """The handout as Markdown; ``root`` (the app's address ending in "/") adds each exercise's link."""
    t: Callable[..., str] = lambda key, **kw: message(key, lang, **kw)  # noqa: E731
    out = [f"# {t('workshop.handout_title')}", "", t("workshop.intro"), ""]
    out += [f"_{t('workshop.handout_made', date=generated_at(), version=tool_version())}_", ""]
    if note := _loopback_note(root, lang):
        out += [f"> {note}", ""]
    for ex, words, link, ans in _parts(lang, root, with_answers, exercises or load_exercises(), catalog):
        out += [f"## {t('workshop.exercise_heading', number=ex.number, title=t(ex.title))}", ""]
        out += [f"_{t('workshop.source', source=ex.source)}_", ""]
        out += [f"**{t('workshop.scenario_label')}** {words}", ""]
        out += [f"**{t('workshop.question_label')}** {t(ex.question)}", ""]
        out += [f"**{t('workshop.hint_label')}** {t(ex.hint)}", ""]
        if link:
            out += [f"**{t('workshop.link_label')}** <{link}>", ""]
        if ans is None:
            out += [f"**{t('workshop.your_answer')}**", "", *(["> "] * ANSWER_LINES), ""]
            continue
        out += [f"**{t('workshop.answer_label')}**", ""]
        for block in markdown_steps(ans, lang):
            out += [block, ""]
    return "\n".join(out).rstrip() + "\n"


def _inline(text: str) -> str:
    """Escaped text with the messages' Markdown emphasis (**bold**, `code`) as HTML."""
    escaped = html.escape(text)
    escaped = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escaped)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", escaped)


def html_handout(
    lang: str = "en",
    with_answers: bool = False,
    root: str = "",
    exercises: Sequence[Exercise] | None = None,
    catalog: Catalog | None = None,
) -> str:
    """The handout as one printable HTML file: inline style, no scripts, fonts or images."""
    esc = html.escape
    t: Callable[..., str] = lambda key, **kw: message(key, lang, **kw)  # noqa: E731
    body = [
        f"<h1>{esc(t('workshop.handout_title'))}</h1>",
        f"<p>{_inline(t('workshop.intro'))}</p>",
        f"<p class='meta'>{esc(t('workshop.handout_made', date=generated_at(), version=tool_version()))}</p>",
    ]
    if note := _loopback_note(root, lang):
        body.append(f"<p class='note'>{esc(note)}</p>")
    for ex, words, link, ans in _parts(lang, root, with_answers, exercises or load_exercises(), catalog):
        part = [
            f"<h2>{esc(t('workshop.exercise_heading', number=ex.number, title=t(ex.title)))}</h2>",
            f"<p class='meta'>{esc(t('workshop.source', source=ex.source))}</p>",
            f"<p><strong>{esc(t('workshop.scenario_label'))}</strong> {esc(words)}</p>",
            f"<p><strong>{esc(t('workshop.question_label'))}</strong> {_inline(t(ex.question))}</p>",
            f"<p><strong>{esc(t('workshop.hint_label'))}</strong> {_inline(t(ex.hint))}</p>",
        ]
        if link and link.startswith(("http://", "https://")):
            part.append(
                f"<p><strong>{esc(t('workshop.link_label'))}</strong> <a href='{esc(link)}'>{esc(link)}</a></p>"
            )
        if ans is None:
            part.append(f"<p><strong>{esc(t('workshop.your_answer'))}</strong></p><div class='box'></div>")
        else:
            part.append(f"<p><strong>{esc(t('workshop.answer_label'))}</strong></p>")
            for step in ans.steps:
                if isinstance(step, Table):
                    head, rows = step.render(lang)
                    cells = "".join(f"<th>{esc(h)}</th>" for h in head)
                    lines = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
                    part.append(f"<table><tr>{cells}</tr>{lines}</table>")
                else:
                    part.append(f"<p>{_inline(step.render(lang))}</p>")
        body.append(f"<section>{''.join(part)}</section>")
    return (
        f"<!doctype html><html lang='{'zh-Hans' if lang == 'zh' else esc(lang)}'><head><meta charset='utf-8'>"
        f"<title>{esc(t('workshop.handout_title'))}</title><style>{STYLE}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )


RENDERERS = {"md": markdown_handout, "html": html_handout}
