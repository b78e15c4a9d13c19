"""Real browser (issue 28, items 4, 5 and 8): a link opens the page its path names with every value it
carries, catalog ids included; a fresh server's first visitor of a page URL gets that page, not
Streamlit's "Page not found"; no page asks another host for anything (its icon included), and
visitors see no Deploy button. A hostile link (issue 29, items 4 and 5) places no link on the page,
keeps its page and says what it refused.

Skips without Chromium outside CI and fails in CI (the fixtures of tests/test_browser.py). A test of
a first visit starts its own server: the first session of a process is the one Streamlit got wrong.
"""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from core.messages import message
from core.spec import json_fields
from core.teaching.exercises import load_exercises
from tests.test_browser import CATALOG, ROOT, WAIT_MS, browser, press, run_server, server, settled  # noqa: F401
from ui.sidebar import DEFAULTS

TITLES = {
    "": "explorer.title",
    "explorer": "explorer.title",
    "plan": "plan.title",
    "load-test": "lt.title",
    "validation": "val.title",
    "learn": "learn.title",
    "workshop": "workshop.title",
    "compare": "compare.title",
    "catalog": "catalog.title",
}
"""Each page's URL path and the message key of its title."""
LINKS = [
    "plan?model=qwen3-32b",
    "learn?model=llama-3-8b&gpu=h100-sxm",
    "load-test?model=llama-3.1-8b&gpu=a10&lt_rate=1.78",
    "plan?gpu=h100-sxm",
    "compare?model=qwen3-8b&gpu=l4",
    "workshop?exercise=3&model=llama-3.1-8b&gpu=a100-80gb&input_len=128&output_len=128&batch=32",
    # the handout's links to the page that answers each exercise (the workshop links are of the form above)
    *(ex.links("")["page"] for ex in load_exercises()),
]
NAMES = {"model": {m.id: m.name for m in CATALOG.models}, "gpu": {g.id: g.name for g in CATALOG.gpus}}
TINY = json.loads((ROOT / "tests" / "data" / "tiny_llama_config.json").read_text())


def _context(browser, server: str, requests: list[str] | None = None):  # noqa: F811
    """A new browser context that records every request (when given a list) and lets only those to
    ``server`` through."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})

    def route(request_route):
        url = request_route.request.url
        if requests is not None:
            requests.append(url)
        if url.startswith(server):
            request_route.continue_()
        else:
            request_route.abort()

    context.route("**/*", route)
    return context


def _open(context, url: str):
    tab = context.new_page()
    tab.set_default_timeout(WAIT_MS)
    tab.goto(url)
    return tab


def _kept(query: dict[str, str]) -> dict[str, str]:
    """What the URL holds once the page has settled: catalog ids as the names the lists show, and
    values equal to the sidebar's defaults left out (Streamlit drops a bound widget's default)."""
    kept = {}
    for key, value in query.items():
        if DEFAULTS.get(key) is not None and value == str(DEFAULTS[key]):
            continue
        kept[key] = NAMES[key].get(value, value) if key in NAMES else value
    return kept


def _no_page_not_found(page, console: list[str]) -> None:
    from playwright.sync_api import expect

    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(page.get_by_text("Page not found")).to_have_count(0)
    assert not [line for line in console if "Page not found" in line]


@pytest.mark.parametrize("link", LINKS)
def test_a_link_opens_the_page_its_path_names_with_every_value_it_carries(browser, server, link):  # noqa: F811
    from playwright.sync_api import expect

    path, _, query_string = link.partition("?")
    query = dict(parse_qsl(query_string))
    context = _context(browser, server)
    console: list[str] = []
    context.on("console", lambda msg: console.append(msg.text))
    page = _open(context, f"{server}/{link}")
    try:
        expect(page.get_by_role("heading", name=message(TITLES[path]), exact=True)).to_be_visible()
        model, gpu = query.get("model", DEFAULTS["model"]), query.get("gpu", DEFAULTS["gpu"])
        expect(page.get_by_role("combobox", name="Model")).to_have_value(NAMES["model"][model])
        expect(page.get_by_role("combobox", name="GPU", exact=True)).to_have_value(NAMES["gpu"][gpu])
        for key, label in (("input_len", "sidebar.input_len"), ("output_len", "sidebar.output_len")):
            if key in query:
                expect(page.get_by_role("spinbutton", name=message(label))).to_have_value(query[key])
        if "batch" in query:
            expect(page.get_by_role("spinbutton", name=message("sidebar.batch"))).to_have_value(query["batch"])
        if "lt_rate" in query:
            expect(page.get_by_label(message("lt.rate"))).to_have_value(query["lt_rate"])
        if "exercise" in query:
            ex = load_exercises()[int(query["exercise"]) - 1]
            heading = message("workshop.exercise_heading", number=ex.number, title=message(ex.title))
            expect(page.get_by_role("heading", name=heading)).to_be_visible()
        settled(page)
        # the page the path named, its URL path kept, every value kept
        address = urlsplit(page.url)
        assert address.path == f"/{path}"
        assert _kept(query).items() <= dict(parse_qsl(address.query)).items(), page.url
        expect(page.get_by_text(message("link.ignored_title"))).to_have_count(0)
        expect(page.get_by_test_id("stException")).to_have_count(0)
        _no_page_not_found(page, console)
    finally:
        context.close()


@pytest.mark.parametrize(
    ("link", "lang"), [("plan", "en"), ("workshop?exercise=2&lang=zh", "zh")], ids=["plan", "workshop-zh"]
)
def test_a_fresh_servers_first_visitor_of_a_page_url_gets_that_page(browser, link, lang):  # noqa: F811
    from playwright.sync_api import expect

    path = link.partition("?")[0]
    with run_server(ROOT / "app.py") as fresh:  # nobody has visited it yet: this is its first session
        context = _context(browser, fresh)
        console: list[str] = []
        context.on("console", lambda msg: console.append(msg.text))
        page = _open(context, f"{fresh}/{link}")
        try:
            expect(page.get_by_role("heading", name=message(TITLES[path], lang), exact=True)).to_be_visible()
            if "exercise=2" in link:
                ex = load_exercises()[1]
                heading = message("workshop.exercise_heading", lang, number=2, title=message(ex.title, lang))
                expect(page.get_by_role("heading", name=heading)).to_be_visible()
            # the whole frame, in the link's language: the sidebar's scenario and the navigation's titles
            nav = page.get_by_test_id("stSidebarNavLink")
            expect(nav.filter(has_text=message("nav.plan", lang))).to_be_visible()
            expect(nav.filter(has_text=message("workshop.nav", lang))).to_be_visible()
            expect(page.get_by_role("combobox", name=message("sidebar.model", lang))).to_have_value(
                NAMES["model"][DEFAULTS["model"]]
            )
            settled(page)
            assert urlsplit(page.url).path == f"/{path}"
            _no_page_not_found(page, console)
            # the session's first change is taken, and the next (its widgets keep their ids)
            slider = page.get_by_role("slider", name=message("sidebar.batch", lang))
            press(slider, "ArrowRight", "12")
            expect(page).to_have_url(re.compile(r"batch=12(&|$)"))
            press(slider, "ArrowRight", "16")
            expect(page).to_have_url(re.compile(r"batch=16(&|$)"))
            assert urlsplit(page.url).path == f"/{path}"
            expect(page.get_by_test_id("stException")).to_have_count(0)
        finally:
            context.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_page_fetches_anything_from_another_host_and_visitors_get_no_deploy_button(browser, server, lang):  # noqa: F811
    from playwright.sync_api import expect

    requests: list[str] = []
    context = _context(browser, server, requests)
    try:
        for path in ("", "plan", "load-test", "validation", "learn", "workshop", "compare", "catalog"):
            start = len(requests)
            page = _open(context, f"{server}/{path}?{urlencode({'lang': lang})}")
            expect(page.get_by_role("heading", name=message(TITLES[path], lang), exact=True)).to_be_visible()
            settled(page)
            # the tab's icon is the app's own, inline: nothing to fetch
            icon = page.locator("link[rel~='icon']").first
            expect(icon).to_have_attribute("href", re.compile(r"^data:image/svg\+xml;base64,"))
            page.wait_for_load_state("networkidle")
            loaded = requests[start:]
            assert loaded, path
            assert [url for url in loaded if not url.startswith(server)] == [], path
            expect(page.get_by_test_id("stAppDeployButton")).to_have_count(0)
            page.close()
    finally:
        context.close()


def test_a_hostile_link_places_no_link_on_the_page_keeps_its_page_and_says_what_it_refused(browser, server):  # noqa: F811
    from playwright.sync_api import expect

    context = _context(browser, server)
    try:
        # the audit's F6: the model name inside mcfg was drawn on Compare as a link to an outside site; a
        # backtick in a value ended the notice's code span and its URL became a link there too
        name = "MARK [Official answer key](https://evil.example/phish) _urgent_"
        token = json_fields.pack({"n": name, "c": TINY}, 6000)
        page = _open(context, f"{server}/compare?mcfg={token}&batch=%60https://evil.example/notice")
        expect(page.get_by_role("heading", name=message("compare.title"), exact=True)).to_be_visible()
        current = page.get_by_text("Current scenario:")
        expect(current).to_contain_text("MARK Official answer key")
        expect(current.locator("em")).to_have_count(0)
        expect(page.get_by_test_id("stAlert").filter(has_text="batch=")).to_contain_text("ignored: must be 1-1024")
        settled(page)
        expect(page.locator("a[href*='evil.example']")).to_have_count(0)
        # F7: an infinite value on Plan opened the Explorer with no notice; a query of more than 1,000
        # values Streamlit dropped whole, opening the page at its defaults without a word
        # and an error quoting a link's text (a config's model_type) drew its URL as a link
        hostile_type = json_fields.pack({"n": "x", "c": TINY | {"model_type": "https://evil.example/type"}}, 6000)
        for link, said in (
            (f"plan?plan_users=1e999&mcfg={hostile_type}", "plan_users=1e999 ignored: must be 1 to 10,000,000"),
            ("plan?" + "&".join(f"k{i}=1" for i in range(1001)), "none of its values were read"),
        ):
            page = _open(context, f"{server}/{link}")
            expect(page.get_by_role("heading", name=message("plan.title"), exact=True)).to_be_visible()
            expect(page.get_by_test_id("stAlert").filter(has_text=message("link.ignored_title"))).to_contain_text(said)
            settled(page)
            assert urlsplit(page.url).path == "/plan" and "dropped_query" not in page.url, page.url
            expect(page.locator("a[href*='evil.example']")).to_have_count(0)
            expect(page.get_by_test_id("stException")).to_have_count(0)
    finally:
        context.close()
