"""Browser-test harness: Debian's headless Chromium driven by Selenium 4, and Dash servers on loopback.

Used by tests/test_web_*.py and resolver/web/screenshots.py's test twin. Chromium and chromedriver
come from the system (/usr/bin); tests skip with a clear reason only when they are absent.
"""
from __future__ import annotations

import shutil
import tempfile
import threading
import time
from pathlib import Path

from tests.conftest import free_port

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
CHROMEDRIVER_CANDIDATES = ("/usr/bin/chromedriver",)

# Flags for a root, headless, offline machine: no sandbox (root), no GPU, no phoning home.
CHROMIUM_FLAGS = (
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--disable-extensions", "--window-size=1400,1000",
)


def _first_existing(candidates) -> str | None:
    for path in candidates:
        if Path(path).exists():
            return path
    return None


def browser_missing_reason() -> str | None:
    """Why browser tests cannot run here, or None when Chromium and chromedriver are present."""
    if _first_existing(CHROMIUM_CANDIDATES) is None:
        return "chromium not installed (apt-get install chromium chromium-driver; tests/run.sh does it as root)"
    if _first_existing(CHROMEDRIVER_CANDIDATES) is None:
        return "chromedriver not installed (apt-get install chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium not installed (pip install -r tests/requirements.txt)"
    return None


def browser_marks() -> list:
    """The marks of a browser test: ``browser`` (left out by ``tests/run.sh --fast``) and the
    session fixture ``browser_ready`` (tests/conftest.py), which waits for tests/run.sh's
    background install of Chromium and skips, with the reason, where Chromium cannot run.
    For a module: ``pytestmark = browser_marks()``."""
    import pytest

    return [pytest.mark.browser, pytest.mark.usefixtures("browser_ready")]


def needs_browser(test):
    """Decorator form of ``browser_marks`` for one test."""
    for mark in browser_marks():
        test = mark(test)
    return test


class DashServer:
    """Serve a Dash app's Flask server on 127.0.0.1 in a background thread (werkzeug, threaded)."""

    def __init__(self, app, port: int | None = None):
        import logging

        from werkzeug.serving import make_server

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no request log in test output
        self.port = port or free_port()
        self._server = make_server("127.0.0.1", self.port, app.server, threaded=True)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._thread.join(timeout=10)


class Browser:
    """One headless Chromium session with helpers for waiting on Dash pages and reading the console."""

    def __init__(self, width: int = 1400, height: int = 1000):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self._profile = tempfile.mkdtemp(prefix="rs-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = _first_existing(CHROMIUM_CANDIDATES)
        for flag in CHROMIUM_FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--window-size={width},{height}")
        options.add_argument(f"--user-data-dir={self._profile}")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(executable_path=_first_existing(CHROMEDRIVER_CANDIDATES))
        self.driver = webdriver.Chrome(service=service, options=options)
        self.driver.set_page_load_timeout(30)

    def close(self):
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self._profile, ignore_errors=True)

    # --- navigation and waiting -------------------------------------------------------------
    def open(self, url: str, ready_selector: str = "#react-entry-point *", timeout: float = 20):
        self.driver.get(url)
        return self.wait_for(ready_selector, timeout=timeout)

    def wait_for(self, selector: str, timeout: float = 15):
        """Wait until an element matching the CSS selector is present; return it."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, timeout).until(
            ec.presence_of_element_located((By.CSS_SELECTOR, selector)))

    def wait_until(self, predicate, timeout: float = 15, message: str = "condition"):
        """Poll predicate(driver) until it returns something truthy; return that value."""
        deadline = time.monotonic() + timeout
        last_error = None
        while time.monotonic() < deadline:
            try:
                value = predicate(self.driver)
                if value:
                    return value
            except Exception as exc:  # stale elements while Dash re-renders
                last_error = exc
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {message}" + (f" (last error: {last_error})" if last_error else ""))

    def wait_idle(self, timeout: float = 15):
        """Wait until Dash has no callback in flight (its loading marker is gone)."""
        self.wait_until(lambda d: not d.find_elements("css selector", "[data-dash-is-loading='true']")
                        and d.execute_script("return document.readyState") == "complete",
                        timeout=timeout, message="Dash callbacks to finish")

    def find(self, selector: str):
        return self.driver.find_element("css selector", selector)

    def hover_text(self, element) -> str:
        """Rest the real mouse on a table cell and read the tooltip the grid shows for it."""
        from selenium.webdriver.common.action_chains import ActionChains

        ActionChains(self.driver).move_to_element(element).pause(0.2).move_by_offset(1, 1).perform()
        return self.wait_until(lambda d: (d.find_elements("css selector", ".ag-tooltip") or [None])[0]
                               and d.find_element("css selector", ".ag-tooltip").text, message="tooltip")

    def find_all(self, selector: str):
        return self.driver.find_elements("css selector", selector)

    def text(self, selector: str) -> str:
        return self.find(selector).text

    def click(self, selector: str):
        self.find(selector).click()

    # --- Dash components ----------------------------------------------------------------------
    def choose(self, option_text: str, scope: str = "body"):
        """Click the radio / checkbox option with this visible text inside `scope` (CSS)."""
        def option(d):
            for el in d.find_elements("css selector", f"{scope} [role='option']"):
                if el.text.strip() == option_text:
                    return el
            return None
        self.wait_until(option, message=f"option {option_text!r} in {scope}").click()

    def select_dropdown(self, component_id: str, option_text: str, close: bool = True):
        """Open a dcc.Dropdown (Dash 4 markup) and pick the option whose text is option_text."""
        from selenium.webdriver.common.keys import Keys

        self.click(f"#{component_id}")
        def option(d):
            for el in d.find_elements("css selector", ".dash-dropdown-option"):
                if el.text.strip() == option_text:
                    return el
            return None
        element = self.wait_until(option, message=f"option {option_text!r} of #{component_id}")
        # Long option lists scroll; bring the option out from under the search box first.
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
        element.click()
        if close and self.find(f"#{component_id}").get_attribute("aria-expanded") == "true":
            self.driver.switch_to.active_element.send_keys(Keys.ESCAPE)

    def figure(self, graph_id: str) -> dict:
        """The plotly figure currently drawn in a dcc.Graph (data + layout) as JSON-able dict."""
        return self.driver.execute_script(
            "const el = document.querySelector(arguments[0] + ' .js-plotly-plot');"
            "if (!el || !el.data) return null;"
            "return {data: el.data.map(t => Object.assign({}, t, {})), layout: el.layout};",
            f"#{graph_id}")

    def figure_by_index(self, index: int, scope: str = "#ex-main") -> dict:
        """The index-th plotly figure drawn inside `scope` (data + layout)."""
        return self.driver.execute_script(
            "const el = document.querySelectorAll(arguments[0] + ' .js-plotly-plot')[arguments[1]];"
            "return el ? {data: el.data, layout: el.layout} : null;", scope, index)

    # --- diagnostics --------------------------------------------------------------------------
    def console_errors(self) -> list[str]:
        """Browser console entries at SEVERE level since the last call (favicon 404s ignored)."""
        entries = self.driver.get_log("browser")
        return [e["message"] for e in entries
                if e.get("level") == "SEVERE" and "favicon.ico" not in e.get("message", "")]

    def screenshot(self, path: str | Path):
        self.driver.save_screenshot(str(path))

    def enable_downloads(self, directory: str | Path):
        """Let downloads land in `directory` without a prompt (headless Chromium refuses them otherwise)."""
        Path(directory).mkdir(parents=True, exist_ok=True)
        self.driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(directory)})

    def wait_download(self, directory: str | Path, name: str, timeout: float = 15) -> Path:
        path = Path(directory) / name
        self.wait_until(lambda d: path.is_file() and path.stat().st_size > 0
                        and not (Path(directory) / (name + ".crdownload")).exists(),
                        timeout=timeout, message=f"download {name}")
        return path

    def horizontal_overflow(self) -> int:
        """Pixels by which the page body is wider than the window (0 = no sideways scrolling)."""
        return self.driver.execute_script(
            "return Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
            " - document.documentElement.clientWidth;")

    def type_into(self, selector: str, text: str, clear: bool = True):
        """Click an input with the mouse and type into it with the keyboard, as a person does."""
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.keys import Keys

        element = self.find(selector)
        ActionChains(self.driver).click(element).perform()
        if clear:
            element.send_keys(Keys.CONTROL, "a")
            element.send_keys(Keys.DELETE)
        element.send_keys(text)
        return element

    def mouse_click(self, element_or_selector):
        """A real mouse press and release on an element (ActionChains), not a synthetic DOM click."""
        from selenium.webdriver.common.action_chains import ActionChains

        element = self.find(element_or_selector) if isinstance(element_or_selector, str) else element_or_selector
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
        ActionChains(self.driver).move_to_element(element).pause(0.05).click_and_hold().pause(0.05) \
            .release().perform()
        return element


def serve_in_browser(dataset_path, make_app, ready_selector: str):
    """Fixture body shared by the web-app tests: open the dataset read-only, serve
    `make_app(dataset, db)` on loopback, yield a Browser showing it; clean up after."""
    import pytest

    from resolver.web.data import open_app_dataset

    if browser_missing_reason():
        pytest.skip(browser_missing_reason())
    ds, db = open_app_dataset(dataset_path)
    browser = Browser()
    try:
        with DashServer(make_app(ds, db)) as server:
            browser.open(server.url("/"), ready_selector=ready_selector)
            yield browser
    finally:
        browser.close()
        db.close()


# --- a real mouse -------------------------------------------------------------------------------

def hover_point(browser, graph, offsets=None, settle: float = 0.15):
    """Move the real mouse over a plotly graph until plotly reports a hovered point; return its offset.

    gl3d scenes pick on mouse-move, so the pointer must rest on a point before a press counts.
    Offsets are tried from the centre outwards (in pixels from the element's centre).
    """
    from selenium.webdriver.common.action_chains import ActionChains

    size = graph.size
    if offsets is None:
        steps = [(dx, dy) for dy in range(-3, 4) for dx in range(-4, 5)]
        steps.sort(key=lambda s: abs(s[0]) + abs(s[1]))
        offsets = [(int(dx * size["width"] / 11), int(dy * size["height"] / 9)) for dx, dy in steps]
    # Observe (not fire) plotly's own hover event: gl3d scenes leave no _hoverdata behind.
    browser.driver.execute_script("const g = arguments[0]; g.__rsHovered = false;"
                                  "if (!g.__rsListening) { g.on('plotly_hover', () => { g.__rsHovered = true; });"
                                  " g.on('plotly_unhover', () => { g.__rsHovered = false; }); g.__rsListening = true; }",
                                  graph)
    for dx, dy in offsets:
        ActionChains(browser.driver).move_to_element_with_offset(graph, dx, dy).pause(settle) \
            .move_by_offset(1, 0).pause(settle).perform()
        if browser.driver.execute_script("return arguments[0].__rsHovered === true;", graph):
            return dx + 1, dy
    raise AssertionError("the mouse found no point to hover on this graph")


def cartesian_point_offset(browser, graph, trace: int = 0, index: int = 0):
    """Where a 2-D plotly point is drawn, as an offset from the graph's centre (for the real mouse)."""
    return tuple(browser.driver.execute_script(
        "const g = arguments[0], t = g._fullData[arguments[1]], i = arguments[2];"
        "const xa = g._fullLayout[(t.xaxis || 'x').replace('x', 'xaxis')], ya = g._fullLayout[(t.yaxis || 'y')"
        ".replace('y', 'yaxis')];"
        "const x = xa._offset + xa.l2p(xa.d2l(t.x[i])), y = ya._offset + ya.l2p(ya.d2l(t.y[i]));"
        "const r = g.getBoundingClientRect();"
        "return [Math.round(x - r.width / 2), Math.round(y - r.height / 2)];", graph, trace, index))


def real_click(browser, graph, offset=None, hold: float = 0.12):
    """Press and release the real mouse on a graph point: hover until plotly picks a point, then hold
    the button at least one animation frame (gl3d ignores shorter presses) and release."""
    from selenium.webdriver.common.action_chains import ActionChains

    dx, dy = offset if offset is not None else hover_point(browser, graph)
    ActionChains(browser.driver).move_to_element_with_offset(graph, dx, dy).pause(0.1) \
        .click_and_hold().pause(hold).release().perform()
    return dx, dy


def serving_apps(tmp_path_factory, names, height: int):
    """The web apps named (leaderboard, explorer, spiderweb) on loopback over the shared web
    dataset, each linking to the others' real addresses, and one browser 1280 wide: a
    generator for a module fixture, yielding links, browser, dataset and the screenshot folder."""
    import os

    from resolver.web import explorer, leaderboard, spiderweb
    from resolver.web.data import open_app_dataset
    from tests.support.web_dataset import shared_web_dataset

    dataset = shared_web_dataset(tmp_path_factory)
    ports = {name: free_port() for name in names}
    links = {name: f"http://127.0.0.1:{port}/" for name, port in ports.items()}
    opened = [open_app_dataset(dataset) for _ in names]
    builders = {"leaderboard": leaderboard.build_app, "explorer": explorer.build_app, "spiderweb": spiderweb.build_app}
    servers = [DashServer(builders[name](ds, db, links=links), ports[name]) for name, (ds, db) in zip(names, opened)]
    browser = Browser(1280, height)
    shots = Path(os.environ.get("RS_SCREENSHOTS") or tmp_path_factory.getbasetemp() / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    try:
        for server in servers:
            server.__enter__()
        yield {"links": links, "browser": browser, "dataset": dataset, "shots": shots}
    finally:
        browser.close()
        for server in servers:
            server.__exit__(None, None, None)
        for _, db in opened:
            db.close()
