"""Real browser: Playwright drives Debian's Chromium against `streamlit run` on loopback.

Outside CI the test skips when Chromium is not installed; in CI (CI=true) a missing browser fails.
Screenshots go to test-artifacts/.

Robust on a busy machine: every wait is on content or on the app's script state (``stApp``'s
``data-test-script-state``), each with :data:`WAIT_MS` to get there; no test sleeps or depends on
Playwright's 5 s default.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from core.estimate.result import estimate
from core.levers.settings import Levers, Speculative
from core.spec.catalog import load_catalog
from core.spec.deployment import Deployment, Workload
from core.spec.engine import EngineConfig
from core.spec.engine_defaults import sized_max_model_len
from core.spec.precision import kv_precision, weight_precision
from ui import fmt

CATALOG = load_catalog()
BF16 = weight_precision("bf16")
ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WAIT_MS = 30_000
"""How long any wait may take: a rerun takes ~0.1 s here, several seconds on a machine running a
second CPU-heavy job; a wait ends as soon as its content shows, so this only bounds a failure."""
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


@contextlib.contextmanager
def run_server(script: Path = ROOT / "app.py"):
    """``streamlit run script`` on loopback from the project's folder (its .streamlit/config.toml),
    yielding its URL once its health endpoint answers; stopped on exit."""
    port = _free_port()
    command = [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true"]
    command += ["--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
def server():
    with run_server() as url:
        yield url


@pytest.fixture(scope="module")
def browser(server):
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is not installed: CI must run the browser test (apt-get install chromium)")
        pytest.skip("Chromium is not installed (apt-get install chromium); CI runs this test")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        from playwright.sync_api import expect

        expect.set_options(timeout=WAIT_MS)
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # No warm-up session: the first test is the fresh server's first visitor (ui/server_start.py
        # turns Streamlit's legacy pages/ mode off before it arrives).
        yield browser
        browser.close()


def local_context(browser, server: str, **options):
    """A new browser context that reaches only ``server`` (every other request aborted);
    ``options`` are Playwright's (viewport, is_mobile, ...)."""
    context = browser.new_context(**options)
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(server) else route.abort())
    return context


@pytest.fixture
def open_page(browser, server):
    contexts = []

    def open_(path: str = "", height: int = 1000):
        context = local_context(browser, server, viewport={"width": 1400, "height": height})
        contexts.append(context)
        tab = context.new_page()
        tab.set_default_timeout(WAIT_MS)
        tab.goto(f"{server}/{path}")
        return tab

    yield open_
    for context in contexts:
        context.close()


def metric(page, label: str):
    return page.get_by_test_id("stMetric").filter(has_text=label).get_by_test_id("stMetricValue")


def settled(page) -> None:
    """Wait until the app has finished its script run (Streamlit marks its root element)."""
    from playwright.sync_api import expect

    expect(page.get_by_test_id("stApp")).to_have_attribute("data-test-script-state", "notRunning")


def press(slider, key: str, value: str) -> None:
    """Focus a slider, press a key, wait until the slider shows ``value`` and the rerun it starts
    has finished."""
    from playwright.sync_api import expect

    slider.focus()
    slider.press(key)
    expect(slider).to_have_attribute("aria-valuetext", value)
    settled(slider.page)


def expected(model="llama-3.1-8b", gpu="a10", weights="bf16", batch=8, input_len=2048, output_len=512, levers=None):
    w = weight_precision(weights)
    dep = Deployment(
        model=CATALOG.model(model),
        gpu=CATALOG.gpu(gpu),
        weights=w,
        kv=kv_precision("auto", w),
        engine=EngineConfig(
            max_model_len=sized_max_model_len(input_len + output_len, CATALOG.model(model).max_context)
        ),
        levers=levers or Levers(),
    )
    return estimate(dep, Workload(input_len=input_len, output_len=output_len, batch=batch))


def test_batch_slider_updates_throughput(open_page):
    from playwright.sync_api import expect

    page = open_page()
    throughput = metric(page, "Throughput")
    expect(throughput).to_have_text(fmt.rate(expected().throughput.output_tokens_per_s), timeout=30_000)
    slider = page.get_by_role("slider", name="Concurrent requests (batch)")
    press(slider, "Home", "1")
    expect(throughput).to_have_text(fmt.rate(expected(batch=1).throughput.output_tokens_per_s))
    expect(metric(page, "Fits")).to_have_text("yes")
    press(slider, "End", "1024")
    expect(throughput).to_have_text(fmt.rate(expected(batch=1024).throughput.output_tokens_per_s))
    expect(metric(page, "Fits")).to_have_text("no")
    expect(page.get_by_test_id("stException")).to_have_count(0)
    # the URL now carries the batch, so the view can be shared
    expect(page).to_have_url(re.compile(r"batch=1024"))


def test_typed_batch_and_lengths_update_the_numbers_the_slider_and_the_link(open_page):
    from playwright.sync_api import expect

    page = open_page()
    throughput = metric(page, "Throughput")
    expect(throughput).to_have_text(fmt.rate(expected().throughput.output_tokens_per_s), timeout=30_000)
    for name, value in (
        ("Prompt length [tokens]", "1800"),
        ("Answer length [tokens]", "250"),
        ("Concurrent requests (batch)", "5"),
    ):
        box = page.get_by_role("spinbutton", name=name)
        box.fill(value)
        box.press("Enter")
        expect(page.get_by_role("slider", name=name)).to_have_attribute("aria-valuetext", value)
        settled(page)
    result = expected(batch=5, input_len=1800, output_len=250)
    expect(throughput).to_have_text(fmt.rate(result.throughput.output_tokens_per_s))
    expect(page).to_have_url(re.compile(r"batch=5"))
    expect(page).to_have_url(re.compile(r"input_len=1800"))
    expect(page).to_have_url(re.compile(r"output_len=250"))
    # the slider's next step from a typed 5 is 6, and the box follows it
    press(page.get_by_role("slider", name="Concurrent requests (batch)"), "ArrowRight", "6")
    expect(page.get_by_role("spinbutton", name="Concurrent requests (batch)")).to_have_value("6")
    expect(page).to_have_url(re.compile(r"batch=6"))
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_switch_to_chinese(open_page):
    from playwright.sync_api import expect

    page = open_page()
    expect(metric(page, "Throughput")).to_be_visible(timeout=30_000)
    page.get_by_role("radio", name="中文", exact=True).click()  # the language by its own name
    expect(page.get_by_role("heading", name="大模型推理权衡探索器")).to_be_visible()
    expect(metric(page, "吞吐")).to_have_text(fmt.rate(expected().throughput.output_tokens_per_s))
    expect(page.get_by_role("slider", name="并发请求数（batch）")).to_be_visible()  # its box beneath shares the name
    expect(page).to_have_url(re.compile(r"lang=zh"))


def test_shared_url_reopens_the_same_scenario(open_page):
    from playwright.sync_api import expect

    page = open_page("?model=Qwen3-8B&gpu=NVIDIA+L4&weights=int4&batch=8&input_len=1024")
    result = expected(model="qwen3-8b", gpu="l4", weights="int4", batch=8, input_len=1024)
    expect(metric(page, "TPOT")).to_have_text(fmt.duration(result.latency.tpot_s), timeout=30_000)
    expect(metric(page, "Throughput")).to_have_text(fmt.rate(result.throughput.output_tokens_per_s))
    expect(page.get_by_role("combobox", name="Model")).to_have_value("Qwen3-8B")
    expect(page.get_by_role("combobox", name="GPU", exact=True)).to_have_value("NVIDIA L4")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    ("path", "title"),
    [
        ("", {"en": "LLM Inference Tradeoff Explorer", "zh": "大模型推理权衡探索器"}),
        ("learn", {"en": "Learn: where every number comes from", "zh": "学习：每个数字从哪里来"}),
        ("plan", {"en": "Plan: can this setup serve the load?", "zh": "规划：这套配置扛得住吗？"}),
        ("load-test", {"en": "Load test: where does TTFT avalanche?", "zh": "压测：TTFT 在哪里雪崩？"}),
        ("validation", {"en": "Validation: how close are the numbers?", "zh": "验证：数字有多准？"}),
        ("compare", {"en": "Compare scenarios", "zh": "场景对比"}),
        ("catalog", {"en": "Catalog", "zh": "目录"}),
        ("workshop", {"en": "Workshop: seven exercises on inference tradeoffs", "zh": "课堂练习：推理权衡七题"}),
    ],
)
def test_every_page_renders_in_both_languages(open_page, path, title, lang):
    from playwright.sync_api import expect

    page = open_page(f"{path}?lang={lang}", height=2600)  # tall: the app scrolls inside its own container
    expect(page.get_by_role("heading", name=title[lang], exact=True)).to_be_visible(timeout=30_000)
    expect(page.get_by_test_id("stSidebar").get_by_role("combobox").first).to_be_visible(timeout=30_000)
    if path in ("", "learn", "load-test", "validation"):
        # a page's first visit computes (the validation set, the simulator) before its chart
        expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=30_000)
    if path == "plan":
        expect(page.get_by_test_id("stCode").first).to_be_visible()
    if path == "catalog":
        expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    if path == "compare":
        save = page.get_by_role("button", name={"en": "Save current scenario", "zh": "保存当前场景"}[lang])
        save.click()
        expect(page.locator(".js-plotly-plot")).to_have_count(2)
        press(page.get_by_role("slider").nth(2), "Home", "1")  # batch 1
        save.click()
        expect(page.get_by_test_id("stDataFrame")).to_be_visible()
        expect(page.get_by_test_id("stCaptionContainer").filter(has_text="#2:")).to_be_visible()
        # the saved scenarios ride in the link: a new session opened with it compares them again
        expect(page).to_have_url(re.compile(r"cmp=[A-Za-z0-9_-]+"))
        reopened = open_page(page.url.split("/", 3)[3], height=2600)
        expect(reopened.get_by_test_id("stCaptionContainer").filter(has_text="#2:")).to_be_visible(timeout=30_000)
        expect(reopened.get_by_test_id("stException")).to_have_count(0)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{path or 'explorer'}-{lang}.png"), full_page=True)


def test_plan_form_gives_a_verdict(open_page):
    from playwright.sync_api import expect

    page = open_page("plan")
    verdict = page.get_by_test_id("stAlertContentError").first
    expect(verdict).to_contain_text("Not feasible: TTFT (P95 prompt) binds", timeout=30_000)  # a full engine queues
    users = page.get_by_label("Concurrent users")
    users.fill("5")
    users.press("Enter")
    expect(page.get_by_test_id("stAlertContentSuccess").first).to_contain_text("Feasible")
    expect(page).to_have_url(re.compile(r"plan_users=5"))
    expect(page.get_by_test_id("stCode").filter(has_text="vllm serve")).to_contain_text(
        "vllm serve meta-llama/Llama-3.1-8B"
    )
    # the report is built on the click and its link restores this view, the moved input included
    with page.expect_download(timeout=30_000) as download:
        page.get_by_role("button", name="Download report (Markdown)").click()
    report = Path(download.value.path()).read_text(encoding="utf-8")
    # the address is a Markdown autolink <...> since every document has one renderer (issue 31, item 6)
    assert re.search(r"Reopen this view: <http://\S+/plan\?\S*plan_users=5>", report), report[:600]
    assert "5 users, 30 s think time between requests" in report


def test_a_shared_link_with_speculative_decoding_on(open_page):
    from playwright.sync_api import expect

    page = open_page("?spec=draft&draft=Llama-3.2-1B&spec_k=4&spec_acc=0.7&batch=1", height=2600)
    spec = Speculative(draft=CATALOG.model("llama-3.2-1b"), k=4, acceptance=0.7)
    result = expected(batch=1, levers=Levers(speculative=spec))
    expect(metric(page, "TPOT")).to_have_text(fmt.duration(result.latency.tpot_s), timeout=30_000)
    expect(page.get_by_text("TPOT with and without speculative decoding")).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "explorer-levers-en.png"), full_page=True)


def _add_until(add, message) -> None:
    """Click "Add model" until ``message`` shows: a click right after a file is chosen can land
    before Streamlit has registered the upload and then does nothing (a person clicks again)."""
    from playwright.sync_api import expect

    for _ in range(3):
        add.click()
        settled(add.page)  # the click's rerun has finished: the message shows now or never will
        if message.count():
            break
    expect(message).to_be_visible()


def test_a_hostile_upload_is_a_message_and_injects_nothing(open_page, tmp_path):
    from playwright.sync_api import expect

    page = open_page(height=1600)
    expect(metric(page, "Throughput")).to_be_visible(timeout=30_000)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Add a model from config.json").click()
    uploader = sidebar.get_by_test_id("stFileUploaderDropzoneInput")
    add = sidebar.get_by_role("button", name="Add model")
    errors = sidebar.get_by_test_id("stAlertContentError")
    junk = tmp_path / "<img src=x onerror=alert(1)>.json"
    junk.write_bytes(b'{"model_type": "<script>window.pwned=1</script>", "x": "\xff\xfe"}')
    uploader.set_input_files(str(junk))
    expect(sidebar.get_by_text(f"{junk.stat().st_size:.1f}B")).to_be_visible()  # the file is listed
    _add_until(add, errors.filter(has_text="not UTF-8"))
    link = tmp_path / "link.json"
    link.write_text('{"model_type": "[x](javascript:alert(1))", "num_hidden_layers": 2}')
    uploader.set_input_files(str(link))
    expect(sidebar.get_by_text(f"{link.stat().st_size:.1f}B")).to_be_visible()
    _add_until(add, errors.filter(has_text="unsupported model_type"))
    expect(page.locator("script", has_text="pwned")).to_have_count(0)
    expect(page.locator("a[href^='javascript']")).to_have_count(0)
    assert page.evaluate("window.pwned === undefined")
    expect(page.get_by_test_id("stException")).to_have_count(0)
    expect(metric(page, "Throughput")).to_have_text(fmt.rate(expected().throughput.output_tokens_per_s))
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "hostile-upload-en.png"), full_page=True)


def test_an_input_moved_to_its_minimum_stays_in_the_link(open_page):
    # Streamlit leaves a bound value equal to the widget's default out of the URL; a slider whose
    # default it did not know took its minimum for the default, so a link lost the minimum and
    # reopened at the class default (20 ms here)
    from playwright.sync_api import expect

    page = open_page()
    expect(metric(page, "Throughput")).to_be_visible(timeout=30_000)
    page.get_by_test_id("stSidebar").get_by_text("Engine settings").click()
    slider = page.get_by_role("slider", name="Request overhead before the engine [ms]")
    expect(slider).to_have_attribute("aria-valuetext", "20.00")
    # moved twice: the second move is made against the widget as the first rerun sent it
    press(slider, "ArrowRight", "21.00")
    expect(page).to_have_url(re.compile(r"eff_request=21"))
    press(slider, "Home", "0.00")
    expect(page).to_have_url(re.compile(r"eff_request=0(&|$)"))
    again = open_page("?" + page.url.split("?", 1)[1])
    expect(metric(again, "Throughput")).to_be_visible(timeout=30_000)
    again.get_by_test_id("stSidebar").get_by_text("Engine settings").click()
    reopened = again.get_by_role("slider", name="Request overhead before the engine [ms]")
    expect(reopened).to_have_attribute("aria-valuetext", "0.00")


def test_a_link_value_the_page_cannot_take_is_named(open_page):
    from playwright.sync_api import expect

    page = open_page("?batch=-5&model=qwen3-8b")
    expect(page.get_by_text("`batch=-5` ignored", exact=False).or_(page.get_by_text("batch=-5 ignored"))).to_be_visible(
        timeout=30_000
    )
    expect(page.get_by_role("combobox", name="Model")).to_have_value("Qwen3-8B")
    expect(page).to_have_url(re.compile(r"model=Qwen3-8B"))


def test_each_headline_explains_the_number_shown(open_page):
    """One click on a metric's "How" opens its formula with this scenario's values, ending in the
    number the metric shows; the formula is typeset (KaTeX) and fits inside the popover."""
    from playwright.sync_api import expect

    page = open_page()
    expect(metric(page, "Throughput")).to_be_visible(timeout=30_000)
    settled(page)
    labels = ["Fits", "Max concurrent requests", "TTFT", "TPOT", "Throughput", "Decode bound"]
    shown = {label: metric(page, label).inner_text() for label in labels}
    buttons = page.get_by_test_id("stPopover").get_by_role("button", name="How", exact=True)
    expect(buttons).to_have_count(len(labels))
    for index, label in enumerate(labels):
        buttons.nth(index).click()
        body = page.get_by_test_id("stPopoverBody")
        expect(body.get_by_text("the number shown")).to_contain_text(f"= {shown[label]}")
        expect(body.locator(".katex").first).to_be_visible()
        box, inner = body.bounding_box(), body.locator(".katex-display").last.bounding_box()
        assert inner["x"] + inner["width"] <= box["x"] + box["width"] + 1  # the formula wraps, never runs out
        page.keyboard.press("Escape")
        expect(body).to_have_count(0)


def test_learn_formulas_fit_the_page_with_every_lever_on(open_page):
    """Long substituted formulas break at their "=" signs (ui/explain.py aligned): none runs past
    its column at 1440 px, in either language (the LoRA and prefix formulas did)."""
    from playwright.sync_api import expect

    for lang in ("en", "zh"):
        page = open_page(f"learn?lang={lang}&spec=draft&prefix=1024&lora_n=4&attn=eager&offload_w=1.0")
        expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=30_000)
        settled(page)
        expect(page.locator(".katex-display").first).to_be_visible()
        overflowing = page.evaluate(
            """() => [...document.querySelectorAll('.katex-display')]
                .map(k => [k.querySelector('.katex').getBoundingClientRect().width,
                           k.parentElement.getBoundingClientRect().width, k.textContent.slice(0, 60)])
                .filter(([formula, column]) => formula > column + 1)"""
        )
        assert not overflowing, overflowing
