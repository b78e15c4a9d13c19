"""Real browser: Playwright drives Debian's Chromium against `streamlit run` on loopback.

Outside CI the test skips when Chromium is not installed; in CI (CI=true) a missing browser fails.
Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from core.catalog import load_catalog
from core.deployment import Deployment, Workload
from core.estimate import estimate
from core.precision import kv_precision, weight_precision

CATALOG = load_catalog()
BF16 = weight_precision("bf16")
ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.headless",
            "true",
            "--server.address",
            "127.0.0.1",
            "--server.port",
            str(port),
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("streamlit server did not become healthy") from None
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture(scope="module")
def page(server):
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is not installed: CI must run the browser test (apt-get install chromium)")
        pytest.skip("Chromium is not installed (apt-get install chromium); CI runs this test")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # The first session of a fresh server runs the script twice and drops its first widget
        # event: Streamlit's legacy pages/-folder mode is active until st.navigation has run once
        # in the process. Warm the server with a throwaway session, as any deployment's first
        # visitor would.
        warm = browser.new_context()
        warm_tab = warm.new_page()
        warm_tab.goto(server)
        warm_tab.locator(".js-plotly-plot").wait_for(timeout=60_000)
        warm.close()
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.route(
            "**/*", lambda route: route.continue_() if route.request.url.startswith(server) else route.abort()
        )
        tab = context.new_page()
        tab.goto(server)
        yield tab
        browser.close()


def press(slider, key: str, value: str) -> None:
    """Focus a slider, press a key and wait until the slider shows ``value``."""
    from playwright.sync_api import expect

    slider.focus()
    slider.press(key)
    expect(slider).to_have_attribute("aria-valuetext", value)


def shown_throughput(batch: int) -> str:
    dep = Deployment(
        model=CATALOG.model("llama-3.1-8b"), gpu=CATALOG.gpu("a10"), weights=BF16, kv=kv_precision("auto", BF16)
    )
    result = estimate(dep, Workload(input_len=2048, output_len=512, batch=batch))
    return f"{result.throughput.output_tokens_per_s:,.0f} tok/s"


def test_explorer_loads_and_the_batch_slider_updates_throughput(page):
    from playwright.sync_api import expect

    ARTIFACTS.mkdir(exist_ok=True)
    throughput = page.get_by_test_id("stMetric").filter(has_text="Throughput").get_by_test_id("stMetricValue")
    expect(throughput).to_have_text(shown_throughput(16), timeout=30_000)
    expect(page.locator(".js-plotly-plot")).to_have_count(1)

    slider = page.get_by_role("slider", name="Concurrent requests (batch)")
    press(slider, "Home", "1")
    expect(throughput).to_have_text(shown_throughput(1), timeout=10_000)
    fits = page.get_by_test_id("stMetric").filter(has_text="Fits").get_by_test_id("stMetricValue")
    expect(fits).to_have_text("yes")
    press(slider, "End", "1024")
    expect(throughput).to_have_text(shown_throughput(1024), timeout=10_000)
    expect(fits).to_have_text("no")
    expect(page.get_by_test_id("stException")).to_have_count(0)
    page.screenshot(path=str(ARTIFACTS / "explorer-en.png"), full_page=True)
