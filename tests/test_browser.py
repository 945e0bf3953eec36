"""The tour in a real JupyterLab, in headless Chromium: summaries render as HTML, nothing trips
Jupyter's IOPub rate limit, and a cell printing 5 MB stays responsive and shows its marker.

Needs Debian's ``chromium`` (``.ci/run`` installs it); without it the test is skipped, except
under CI, where a skip would hide a missing install step.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import nbformat
import pytest

from processes import TOKEN_VAR, processes_with

pytestmark = pytest.mark.browser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--no-first-run", "--disable-sync", "--disable-quic"]
BIG_CELL = "%exec --no-raise yes 'a line of the 5 MB browser check, padded to sixty characters...' | head -c 5000000"


def _need(condition: bool, reason: str) -> None:
    if not condition:
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI must run the browser test; .ci/run installs what it needs)")
        pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path, no_leftover_processes):
    """A JupyterLab on 127.0.0.1 with a token, serving a copy of the tour with a 5 MB cell added."""
    _need(CHROMIUM is not None, "Debian's chromium is not installed (apt-get install chromium)")
    try:
        import jupyterlab  # noqa: F401
        import playwright  # noqa: F401
    except ImportError as exc:
        _need(False, f"{exc.name} is not installed (pip install -e '.[test]')")
    root = tmp_path / "lab"
    root.mkdir()
    nb = nbformat.read(os.path.join(ROOT, "notebooks", "tour.ipynb"), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.cells.append(nbformat.v4.new_code_cell(BIG_CELL))
    nbformat.write(nb, str(root / "tour.ipynb"))
    settings = tmp_path / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    news = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"), "TMPDIR": str(tmp_path),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "JUPYTER_CONFIG_DIR": str(tmp_path / "config")}
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", "--ServerApp.port_retries=0",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.news_url=None",
         "--LabApp.extension_manager=readonly", *(["--allow-root"] if os.geteuid() == 0 else [])],
        env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "lab.log", "wb"),  # noqa: SIM115 -- Lab's lifetime
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("JupyterLab did not start: " + (tmp_path / "lab.log").read_text()[-2000:])
            time.sleep(0.2)
        yield url, token
    finally:
        server.send_signal(signal.SIGINT)  # jupyter's own shutdown: kernels first
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        # A kernel whose server is gone ends at once (os._exit: ipykernel's parent poller), so its watchdog
        # sweeps what it had registered -- with a grace, after importing what stops a tree: await that end
        # (bounded) before the leftover check looks, which allows one second.
        deadline = time.monotonic() + 10
        while processes_with(TOKEN_VAR, no_leftover_processes) and time.monotonic() < deadline:
            time.sleep(0.05)


_PROGRESS = """() => {
    const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')];
    const indicator = document.querySelector('.jp-Notebook-ExecutionIndicator');
    return {
        cells: prompts.length,
        ran: prompts.filter(p => /\\d/.test(p.textContent) && !p.textContent.includes('*')).length,
        queued: prompts.filter(p => p.textContent.includes('*')).length,
        kernel: indicator ? indicator.dataset.status : null,
    };
}"""


def _answer_kernel_dialog(page) -> None:
    """JupyterLab sometimes asks which kernel to start (more than one kernelspec is installed): the tour's own."""
    try:
        page.wait_for_selector(".jp-Dialog select", timeout=5_000)
    except Exception:
        return
    page.select_option(".jp-Dialog select", label="Python 3 (ipykernel)")
    page.click(".jp-Dialog button:has-text('Select')")


def _wait_all_run(page, tmp_path, *, stall: float = 120, idle_stall: float = 30) -> None:
    """Wait until every code cell has run, for as long as the kernel makes progress.

    No budget in wall time alone (a loaded machine runs the tour slower, not wrongly): it is stuck when
    no cell has finished for ``stall`` seconds, or the kernel has been idle for ``idle_stall`` seconds
    while cells are still waiting to run.  Then leave a screenshot and the prompts behind.
    """
    last_ran, progress_at, idle_since = -1, time.monotonic(), None
    while True:
        state = page.evaluate(_PROGRESS)
        now = time.monotonic()
        if state["cells"] and state["ran"] == state["cells"] and not state["queued"]:
            return
        if state["ran"] != last_ran:
            last_ran, progress_at = state["ran"], now
        idle_since = (idle_since or now) if state["kernel"] == "idle" else None
        why = (f"no cell finished for {now - progress_at:.0f} s" if now - progress_at > stall else
               "the kernel is idle with cells left to run" if idle_since and now - idle_since > idle_stall else None)
        if why:
            page.screenshot(path=str(tmp_path / "stuck.png"))
            prompts = page.evaluate("() => [...document.querySelectorAll('.jp-InputPrompt')].map(p => p.textContent)")
            raise AssertionError(f"not every cell ran: {why} ({state}); prompts: {prompts}; "
                                 f"screenshot: {tmp_path / 'stuck.png'}")
        time.sleep(0.5)


@pytest.mark.timeout(600)
def test_tour_in_jupyterlab(lab, tmp_path):
    from playwright.sync_api import sync_playwright

    url, token = lab
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            page.goto(f"{url}/lab/tree/tour.ipynb?token={token}", timeout=120_000)
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
            _answer_kernel_dialog(page)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
            page.click(".lm-MenuBar-item:has-text('Run')")
            page.click(".lm-Menu-item:has-text('Run All Cells')")
            _wait_all_run(page, tmp_path)
            page.screenshot(path=str(tmp_path / "tour.png"), full_page=False)
            page.locator("h2:has-text('Background shells')").scroll_into_view_if_needed()
            page.locator("h2:has-text('Background shells')").evaluate("e => e.scrollIntoView({block: 'start'})")
            page.screenshot(path=str(tmp_path / "background.png"), clip={"x": 280, "y": 60, "width": 1000, "height": 900})
            stats = page.evaluate(
                """() => {
                    const outputs = [...document.querySelectorAll('.jp-OutputArea-output')];
                    const rawSummaries = outputs.filter(o => o.dataset.mimeType === 'text/plain'
                        && /^[✔✘] /.test(o.textContent.trim()));
                    const body = document.body.innerText;
                    const cells = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell')];
                    const big = cells[cells.length - 1].innerText;
                    return {
                        html: document.querySelectorAll('.execmagic-result').length,
                        tables: document.querySelectorAll('table.execmagic-shells').length,
                        raw: rawSummaries.length,
                        iopub: body.includes('IOPub data rate exceeded'),
                        bigMarker: big.includes('live output paused'),
                        bigTail: big.includes('full output in'),
                        bigSummary: big.includes('✔ exit 0'),
                        bigLength: big.length,
                        pageLength: body.length,
                    };
                }""")
            begin = time.monotonic()
            page.mouse.wheel(0, 5000)
            page.evaluate("() => document.querySelectorAll('*').length")
            responsive = time.monotonic() - begin
        finally:
            browser.close()
    assert os.path.getsize(tmp_path / "tour.png") > 10_000 and os.path.getsize(tmp_path / "background.png") > 10_000
    assert stats["html"] >= 15 and stats["tables"] >= 1, stats
    assert stats["raw"] == 0, stats
    assert not stats["iopub"], stats
    assert stats["bigMarker"] and stats["bigTail"] and stats["bigSummary"], stats
    assert stats["bigLength"] < 400_000 and stats["pageLength"] < 2_000_000, stats
    assert responsive < 5, responsive
