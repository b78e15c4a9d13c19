"""Documents the tool writes (exports, plan reports, deployment and benchmark sections): one block
model and one renderer for Markdown and HTML."""

__all__ = [
    "blocks",  # Block: one piece of a section (paragraph, list, table, code, checks)
    "checks",  # the plan's headroom checks as Markdown bars and coloured HTML bars
    "render",  # markdown(title, sections, lang) and html(...): the one renderer of every document
]
