"""The workshop's exercises (data/workshop.toml): what each asks, the scenario it loads, and its links.

A scenario is what the sidebar holds, by catalog id: it becomes the deployment and workload the
dashboard would build from the same inputs (engine defaults, max_model_len sized to the request
when not set, no levers), and the query string that opens a page with it.
"""

from __future__ import annotations

import functools
import ipaddress
import tomllib
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any
from urllib.parse import urlencode, urlsplit

from core.spec.catalog import DATA_DIR, Catalog, load_catalog
from core.spec.deployment import Deployment, Workload
from core.spec.engine_defaults import sized_max_model_len
from core.spec.scenario_codec import decode

WORKSHOP_PATH = DATA_DIR / "workshop.toml"
AUTO = "auto"
PAGES = ("explorer", "learn", "plan", "load-test")
"""URL paths of the pages an exercise may send its reader to (app.py's PAGES)."""
WORKSHOP_PAGE = "workshop"
SCENARIO_KEYS = ("model", "gpu", "tp", "weights", "kv", "input_len", "output_len", "batch", "max_model_len")
"""The sidebar inputs a scenario sets, named as the sidebar's URL parameters."""


@dataclass(frozen=True)
class Scenario:
    """What the sidebar holds for an exercise; ``weights``/``kv`` "auto" and ``max_model_len`` None
    as the sidebar's "auto"."""

    model: str
    gpu: str
    input_len: int
    output_len: int
    batch: int
    tp: int = 1
    weights: str = AUTO
    kv: str = AUTO
    max_model_len: int | None = None

    def build(self, catalog: Catalog | None = None) -> tuple[Deployment, Workload]:
        """The deployment and workload the dashboard builds from these inputs (ValueError if impossible)."""
        catalog = catalog or load_catalog()
        short: dict[str, Any] = {
            "model": self.model,
            "gpu": self.gpu,
            "tp": self.tp,
            "input_len": self.input_len,
            "output_len": self.output_len,
            "batch": self.batch,
        }
        if self.weights != AUTO:
            short["weights"] = self.weights
        if self.kv != AUTO:
            short["kv"] = self.kv
        dep, work = decode(short, catalog)
        length = self.max_model_len or sized_max_model_len(work.request_len, dep.model.max_context)
        dep = dep.with_engine(max_model_len=length)
        if work.request_len > dep.max_model_len:
            raise ValueError(f"input_len + output_len ({work.request_len}) exceeds max_model_len ({length})")
        return dep, work

    def query(self) -> dict[str, str]:
        """The URL parameters that open the sidebar with this scenario (defaults left out)."""
        values = {key: getattr(self, key) for key in SCENARIO_KEYS}
        return {
            key: str(value)
            for key, value in values.items()
            if value is not None and value != AUTO and not (key == "tp" and value == 1)
        }


@dataclass(frozen=True)
class Exercise:
    number: int
    id: str
    source: str
    """The chapter(s) it follows (section numbers of the source texts)."""
    page: str
    """URL path of the page that answers it."""
    title: str
    question: str
    hint: str
    """Message keys (data/messages.toml)."""
    scenario: Scenario
    settings: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    """What the answer varies or simulates (variants, GPU counts, loads), as the data file gives it."""

    def query(self, lang: str = "en", extra: dict[str, str] | None = None) -> dict[str, str]:
        """The scenario's URL parameters, the language when not English, and ``extra``."""
        query = self.scenario.query() | (extra or {})
        return query | ({"lang": lang} if lang != "en" else {})

    def links(self, root: str, lang: str = "en", extra: dict[str, str] | None = None) -> dict[str, str]:
        """{"page": the answering page with the scenario, "workshop": this exercise with it}.

        ``root`` is the app's address ending in "/" ("" gives links relative to a page of the app);
        ``extra`` adds parameters of the answering page (e.g. the Load test's traffic).
        """
        page = f"{root}{self.page}?{urlencode(self.query(lang, extra))}"
        workshop = f"{root}{WORKSHOP_PAGE}?{urlencode({'exercise': str(self.number)} | self.query(lang))}"
        return {"page": page, "workshop": workshop}


def _exercise(number: int, raw: dict[str, Any]) -> Exercise:
    scenario = Scenario(**raw["scenario"])
    if raw["page"] not in PAGES:
        raise ValueError(f"exercise {raw['id']}: page must be one of {', '.join(PAGES)}, got {raw['page']!r}")
    return Exercise(
        number=number,
        id=raw["id"],
        source=raw["source"],
        page=raw["page"],
        title=raw["title"],
        question=raw["question"],
        hint=raw["hint"],
        scenario=scenario,
        settings=MappingProxyType(dict(raw.get("settings", {}))),
    )


@functools.cache
def load_exercises() -> tuple[Exercise, ...]:
    """The exercises in their order, numbered from 1."""
    with WORKSHOP_PATH.open("rb") as fh:
        raw = tomllib.load(fh)
    return tuple(_exercise(number, entry) for number, entry in enumerate(raw["exercise"], start=1))


def exercise(key: int | str) -> Exercise:
    """An exercise by number (1-based) or id."""
    for item in load_exercises():
        if key in (item.number, item.id):
            return item
    raise KeyError(key)


def app_root(page_url: str | None) -> str:
    """The app's address ending in "/" from the workshop page's URL without its query
    ("http://host:8501/workshop" -> "http://host:8501/"); "" when there is none (links then are
    relative to a page of the app)."""
    if not page_url:
        return ""
    base = page_url.rstrip("/")
    base = base.removesuffix("/" + WORKSHOP_PAGE)
    return base + "/"


def is_loopback(root: str) -> bool:
    """Whether the address ``root`` names opens only on the computer that uses it: localhost
    (and any name under .localhost), 127.0.0.0/8, ::1, or the unspecified 0.0.0.0 and ::."""
    host = (urlsplit(root).hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def room_root(typed: str) -> str:
    """The app's address as a teacher types it ("192.168.1.20:8501", "http://lab.example.org/llm/")
    as a root ending in "/", "http://" added when no scheme is given; query and fragment dropped.
    ValueError when it names no host, has another scheme or an impossible port."""
    text = typed.strip()
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    try:
        parts.port  # noqa: B018 (raises ValueError on a port out of range or not a number)
    except ValueError as err:
        raise ValueError(f"{typed!r}: {err}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in text):
        raise ValueError(f"{typed!r} is not an http(s) address with a host")
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}/"
