"""Documents the tool writes (exports, plan reports, deployment and benchmark sections): one block
model and one renderer for Markdown and HTML."""

__all__ = [
    "blocks",  # Block: one piece of a section (paragraph, list, table, code, checks)
    "checks",  # the plan's headroom checks as Markdown bars and coloured HTML bars
    "money",  # a price with its source (catalog or entered), CNY at an editable rate: every price text
    "render",  # markdown(title, sections, lang) and html(...): the one renderer of every document
]
