"""Real browser (issue 28, items 1-2): the audit's click paths, and the copied URL reopened in a new
browser context shows the same numbers and the same answer as the session that copied it.

D2: Explorer -> choose the H100 -> Plan -> Explorer showed TPOT 8.6 ms with the A10's efficiencies
(a fresh link: 9.8 ms). D1: /plan -> choose the H100 kept the A10's $1.29/h.
Uses tests/test_browser.py's server and browser; skips without Chromium outside CI, fails in CI.
"""

from __future__ import annotations

from core.messages import message
from core.spec.catalog import load_catalog
from tests.test_browser import browser, expected, local_context, metric, open_page, server, settled  # noqa: F401 (fixtures)
from ui import fmt

H100 = "NVIDIA H100 SXM5 80GB"


def choose_gpu(page, name: str) -> None:
    from playwright.sync_api import expect

    box = page.get_by_role("combobox", name="GPU", exact=True)
    box.click()
    page.keyboard.type(name)
    page.get_by_role("option", name=name, exact=True).click()
    expect(box).to_have_value(name)
    settled(page)


def nav(page, key: str) -> None:
    page.get_by_test_id("stSidebarNavLink").filter(has_text=message(key)).click()
    settled(page)


def answer_text(page) -> str:
    return page.get_by_test_id("stAlert").first.inner_text()


def test_the_efficiencies_follow_the_gpu_through_pages_and_the_link_agrees(open_page):  # noqa: F811
    from playwright.sync_api import expect

    page = open_page("")
    expect(metric(page, "Throughput")).not_to_be_empty()
    choose_gpu(page, H100)
    nav(page, "nav.plan")
    expect(page.get_by_role("spinbutton", name=message("plan.price"))).to_have_value(
        f"{load_catalog().gpu('h100-sxm').price_per_hour}"
    )
    nav(page, "nav.explorer")
    h100 = expected(gpu="h100-sxm")
    expect(metric(page, "TPOT")).to_have_text(fmt.duration(h100.latency.tpot_s))
    expect(metric(page, "Throughput")).to_have_text(fmt.rate(h100.throughput.output_tokens_per_s))
    shown = {label: metric(page, label).inner_text() for label in ("TTFT", "TPOT", "Throughput")}
    said = answer_text(page)

    copied = open_page(page.url.split("/", 3)[-1])  # the address bar, in a new browser context
    expect(metric(copied, "TPOT")).to_have_text(shown["TPOT"])
    assert {label: metric(copied, label).inner_text() for label in shown} == shown
    assert answer_text(copied) == said


def test_the_plan_price_follows_the_gpu_and_the_link_agrees(open_page):  # noqa: F811
    from playwright.sync_api import expect

    page = open_page("plan")
    price = page.get_by_role("spinbutton", name=message("plan.price"))
    expect(price).to_have_value(f"{load_catalog().gpu('a10').price_per_hour}")
    choose_gpu(page, H100)
    h100 = load_catalog().gpu("h100-sxm").price_per_hour
    expect(price).to_have_value(f"{h100}")
    expect(page.get_by_test_id("stMetric").filter(has_text="USD / h").get_by_test_id("stMetricValue")).to_have_text(
        f"${h100:,.2f}"
    )
    said = answer_text(page)
    copied = open_page(page.url.split("/", 3)[-1])
    expect(copied.get_by_role("spinbutton", name=message("plan.price"))).to_have_value(f"{h100}")
    assert answer_text(copied) == said


def test_on_a_phone_the_answer_comes_before_the_inputs(browser, server):  # noqa: F811
    """At 390 x 844 the verdict sentence is above Plan's inputs and the Explorer's metrics, in Chinese."""
    from playwright.sync_api import expect

    context = local_context(browser, server, viewport={"width": 390, "height": 844})
    try:
        for path, below in (("plan?lang=zh", "stNumberInput"), ("?lang=zh", "stMetric")):
            page = context.new_page()
            page.goto(f"{server}/{path}")
            answer = page.get_by_test_id("stMain").get_by_test_id("stAlert").first
            expect(answer).to_be_visible(timeout=30_000)
            settled(page)
            first_input = page.get_by_test_id("stMain").get_by_test_id(below).first
            assert answer.bounding_box()["y"] < first_input.bounding_box()["y"], path
            assert answer.bounding_box()["y"] < 844, path  # on the first screen
            page.close()
    finally:
        context.close()
