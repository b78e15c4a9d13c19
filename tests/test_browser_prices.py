"""Real browser (issue 31, item 5): the exchange rate typed in the sidebar enters the address bar, and
the copied link reopens the Chinese Plan with the rate and the CNY prices at it.
Uses tests/test_browser.py's server and browser; skips without Chromium outside CI, fails in CI.
"""

from __future__ import annotations

import re

from core.messages import message
from core.spec.catalog import load_catalog
from tests.test_browser import browser, local_context, open_page, server, settled  # noqa: F401 (fixtures)


def test_the_rate_typed_enters_the_link_and_the_link_restores_it(open_page):  # noqa: F811
    from playwright.sync_api import expect

    page = open_page("plan?lang=zh")
    rate = page.get_by_role("spinbutton", name=message("prices.rate_label", "zh"))
    rate.fill("7.5")
    rate.press("Enter")
    settled(page)
    expect(page).to_have_url(re.compile(r"cny_rate=7\.5"))
    a10 = load_catalog().gpu("a10")
    copied = open_page(page.url.split("/", 3)[-1])  # the address bar, in a new browser context
    expect(copied.get_by_role("spinbutton", name=message("prices.rate_label", "zh"))).to_have_value("7.5000")
    cny = f"¥{a10.price_per_hour * 7.5:,.2f}"
    cost = copied.get_by_test_id("stMetric").filter(has_text=message("prices.cost_hour", "zh"))
    expect(cost.first.get_by_test_id("stMetricValue")).to_contain_text(cny)  # CNY at the link's rate
