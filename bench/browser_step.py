"""One slider step in a real browser, to the updated page: where the time goes.

    .venv/bin/python bench/browser_step.py [--steps 15] [--runs 1] [--view TAB]

Starts ``streamlit run`` on loopback, opens the page in Chromium (Playwright, 1400x1000) and moves
the batch slider one step with the keyboard, ``--steps`` times (4 -> 6 -> 4 ...: both fit, and
the throughput differs). For each step it records, in the
page's own clock (``performance.now()``), from the key press:

- **sent**: the page sends the new slider value to the server (the slider's own delay);
- **first**, **server**: the first and the last websocket message of the rerun arrive;
- **metric**: the Throughput metric shows its new value (what a reader sees first);
- **script**: the server's rerun has finished (the app's ``data-test-script-state`` back to
  ``notRunning``);
- **settled**: the last DOM change or long main-thread task caused by the step (every chart
  redrawn), found by a MutationObserver and a long-task observer after a quiet second.

It also sums the main-thread long tasks per step (JavaScript and layout over 50 ms), counts the
bytes the websocket received and the Plotly charts the step remounted (chart nodes that are new after
the step: Streamlit's st.plotly_chart remounts each one; ui.figure.chart updates them in place).
``--runs`` repeats the steps in a fresh page (same server) and pools them. The machine's load
average is printed before and after, since other jobs on a shared machine move every figure.
Prints medians; docs/benchmarks.md records runs. Timing is never asserted in tests.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from workshop_servers import HOST, free_port, start_server  # noqa: E402

# Wraps the page's WebSocket before the app loads: each message's arrival time and size, in the page's
# clock, so the server's share of a step is told apart from the browser's.
WIRE = """
(() => {
  window.__frames = []; window.__sent = [];
  const Native = window.WebSocket;
  const send = Native.prototype.send;
  Native.prototype.send = function (data) { window.__sent.push(performance.now()); return send.call(this, data); };
  window.WebSocket = function (...args) {
    const ws = new Native(...args);
    ws.addEventListener('message', e => window.__frames.push(
      [e.timeStamp, e.data.byteLength !== undefined ? e.data.byteLength : e.data.size || e.data.length]));
    return ws;
  };
  window.WebSocket.prototype = Native.prototype;
  Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
})();
"""

OBSERVE = """
() => {
  window.__marks = {mutations: [], tasks: []};
  new MutationObserver(() => window.__marks.mutations.push(performance.now()))
    .observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
  new PerformanceObserver(list => {
    for (const e of list.getEntries()) window.__marks.tasks.push([e.startTime, e.duration]);
  }).observe({type: 'longtask', buffered: false});
}
"""

STATE = "[data-testid='stApp']"
IDLE = f"document.querySelector(\"{STATE}\").getAttribute('data-test-script-state') === 'notRunning'"


def _settle(page, quiet_s: float = 1.0) -> None:
    """Wait until the script is idle and nothing has changed in the DOM for ``quiet_s``."""
    page.wait_for_selector(f"{STATE}[data-test-script-state='notRunning']", timeout=60_000)
    while True:
        last = page.evaluate("() => Math.max(0, ...window.__marks.mutations.slice(-1))")
        now = page.evaluate("() => performance.now()")
        if now - last >= quiet_s * 1e3:
            return
        time.sleep(0.1)


STEP = """
() => {
  window.__t0 = performance.now(); window.__frames = []; window.__sent = [];
  window.__metric = null; window.__done = null;
  // the metric is looked up again on each change: React may replace its node rather than its text
  const read = () => {
    const metric = [...document.querySelectorAll("[data-testid='stMetric']")]
      .find(m => m.textContent.includes('Throughput'));
    return metric ? metric.querySelector("[data-testid='stMetricValue']").textContent : null;
  };
  const before = read();
  new MutationObserver((_, obs) => {
    const now = read();
    if (now !== null && now !== before) { window.__metric = performance.now(); obs.disconnect(); }
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
  let seenRun = false;
  new MutationObserver((records, obs) => {  // a run may start and end within one batch of records
    const s = document.querySelector("[data-testid='stApp']").getAttribute('data-test-script-state');
    if (s === 'running' || records.some(r => r.oldValue === 'running')) seenRun = true;
    if (seenRun && s === 'notRunning') { window.__done = performance.now(); obs.disconnect(); }
  }).observe(document.body, {  // the app's root, found again: it may be a new node by the run's end
    subtree: true, attributes: true, attributeOldValue: true, attributeFilter: ['data-test-script-state'],
  });
}
"""

CHARTS = "[data-testid='stPlotlyChart'], [data-testid='stLivePlotlyChart']"  # st.plotly_chart's, ui.figure.chart's
DRAWN = f"""() => {{
  const charts = document.querySelectorAll("{CHARTS}").length;
  return charts > 0 && document.querySelectorAll('.js-plotly-plot').length >= charts;
}}"""
KEYS = ("sent", "first", "server", "metric", "script", "settled", "long_tasks", "ws_kib", "remounts")
TAG_CHARTS = "() => document.querySelectorAll('.js-plotly-plot').forEach(n => { n.__beforeStep = true; })"
NEW_CHARTS = "() => [...document.querySelectorAll('.js-plotly-plot')].filter(n => !n.__beforeStep).length"


def measure(url: str, steps: int, chromium: str, view: str | None = None) -> dict[str, list[float]]:
    """``steps`` keyboard steps of the batch slider; each key of KEYS in ms per step (ws_kib in KiB,
    remounts a count)."""
    from playwright.sync_api import sync_playwright

    out: dict[str, list[float]] = {key: [] for key in KEYS}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"])
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(url) else r.abort())
        context.add_init_script(WIRE)
        page = context.new_page()
        page.goto(f"{url}/?batch=4")
        page.get_by_test_id("stMetric").filter(has_text="Throughput").wait_for(timeout=60_000)
        if view is not None:
            page.get_by_role("tab", name=view).click()
        page.wait_for_function(DRAWN, timeout=60_000)  # every chart drawn once before the first step
        page.evaluate(OBSERVE)
        slider = page.get_by_role("slider", name="Concurrent requests (batch)")
        for step in range(steps):
            _settle(page, 0.5)
            page.evaluate("() => { window.__marks.mutations = []; window.__marks.tasks = []; }")
            page.evaluate(TAG_CHARTS)
            slider.focus()
            page.evaluate(STEP)
            slider.press("ArrowRight" if step % 2 == 0 else "ArrowLeft")  # 4 <-> 6: both fit, both differ
            page.wait_for_function(
                f"() => window.__metric !== null && (window.__done !== null || {IDLE})", timeout=60_000
            )
            _settle(page)
            t0, metric, done, frames, sent, recorded = page.evaluate(
                "() => [window.__t0, window.__metric, window.__done, window.__frames, window.__sent, window.__marks]"
            )
            last_task = max((s + d for s, d in recorded["tasks"] if s >= t0), default=t0)
            last_mutation = max((m for m in recorded["mutations"] if m >= t0), default=t0)
            out["sent"].append(min(sent) - t0)
            out["first"].append(min(at for at, _ in frames) - t0)
            out["server"].append(max(at for at, _ in frames) - t0)
            out["metric"].append(metric - t0)
            # a short rerun can go running -> notRunning within one React render, leaving the attribute
            # unchanged: then the script ended with its last message (script_finished)
            out["script"].append((done if done is not None else max(at for at, _ in frames)) - t0)
            out["settled"].append(max(last_task, last_mutation) - t0)
            out["long_tasks"].append(sum(d for s, d in recorded["tasks"] if s >= t0))
            out["ws_kib"].append(sum(size for _, size in frames) / 1024)
            out["remounts"].append(page.evaluate(NEW_CHARTS))
        browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--runs", type=int, default=1, help="repeat the steps in this many fresh pages")
    parser.add_argument("--url", help="measure a server already running at this URL")
    parser.add_argument("--view", help="open this Explorer tab first (its English label)")
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("browser_step: Chromium not found (Debian: apt-get install chromium)")
    server = None
    url = args.url
    if url is None:
        port = free_port()
        server = start_server(port)
        url = f"http://{HOST}:{port}"
    load_before = os.getloadavg()
    runs = []
    try:
        for _ in range(args.runs):
            runs.append(measure(url, args.steps, chromium, args.view))
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=20)
    load_after = os.getloadavg()
    units = {"ws_kib": "KiB", "remounts": "charts"}
    loads = [" ".join(f"{value:.2f}" for value in load) for load in (load_before, load_after)]
    print(f"load average (1, 5, 15 min) before {loads[0]}, after {loads[1]}, on {os.cpu_count()} CPUs")
    if args.runs > 1:
        per_run = (f"{statistics.median(r['settled']):.0f} ({statistics.median(r['metric']):.0f})" for r in runs)
        print(f"per run, median settled (metric) in ms: {', '.join(per_run)}")
    print(f"{args.runs} x {args.steps} steps of the Explorer's batch slider, medians (min-max):")
    for key in KEYS:
        values, unit = [v for r in runs for v in r[key]], units.get(key, "ms")
        print(f"  {key:<10} {statistics.median(values):7.0f} {unit} ({min(values):.0f}-{max(values):.0f})")


if __name__ == "__main__":
    main()
