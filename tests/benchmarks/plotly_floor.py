"""The floor under the explorer's first surface: plotly.js alone drawing the same figures.

bench_scale.py takes the explorer's first-surface figures out of the page it just timed (the
``data`` and ``layout`` plotly holds for each graph of ``#ex-main``, and each graph's size) and
serves a bare page with them: no Dash, no React, no callbacks, no other panel; only the
installed plotly package's own plotly.min.js (the file Dash serves, with the same cache
header) and one ``Plotly.newPlot`` per figure, in the explorer's graph config. The page is
timed by the same rule in a fresh browser (cold cache) and again in it (revisit): what any
page showing these surfaces with plotly.js pays in this browser, which no change to the
explorer can go below (docs/performance.md, *Scale*).
"""
from __future__ import annotations

import json
import threading
from pathlib import Path

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>plotly.js floor</title></head>
<body style="margin:0">
<div id="ex-main">{divs}</div>
<script src="/plotly.min.js"></script>
<script>
const figures = {figures};
const config = {config};
figures.forEach((f, i) => Plotly.newPlot('g' + i, f.data, f.layout, config));
</script>
</body></html>
"""

# The explorer's figures as plotly holds them, with each graph's size on the page.
CAPTURE = """
return Array.from(document.querySelectorAll('#ex-main .js-plotly-plot')).map(gd => {
  const box = gd.getBoundingClientRect();
  return {data: gd.data, layout: gd.layout, width: Math.round(box.width), height: Math.round(box.height)};
});
"""


def plotly_js() -> bytes:
    import plotly

    return (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_bytes()


def floor_page(figures: list, config: dict) -> str:
    divs = "".join(f'<div id="g{i}" style="display:inline-block;width:{f["width"]}px;height:{f["height"]}px">'
                   "</div>" for i, f in enumerate(figures))
    plain = [{"data": f["data"], "layout": f["layout"]} for f in figures]
    return PAGE.format(divs=divs, figures=json.dumps(plain).replace("</", "<\\/"), config=json.dumps(config))


class FloorServer:
    """The bare page and plotly.min.js on 127.0.0.1, in a background thread."""

    def __init__(self, page: str):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        script, html = plotly_js(), page.encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                body, kind, cache = ((script, "text/javascript; charset=utf-8", "max-age=31536000")
                                     if self.path == "/plotly.min.js" else (html, "text/html; charset=utf-8", "no-cache"))
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", cache)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def measure_floor(figures: list, config: dict, page_load, ready_js: str) -> dict:
    """Seconds to the first steady frame of the bare page: a fresh browser, then a revisit in it."""
    from tests.support.browser import Browser

    browser = Browser(1400, 1000)
    try:
        with FloorServer(floor_page(figures, config)) as server:
            cold = page_load(browser, server.url(), ready_js)
            revisit = page_load(browser, server.url(), ready_js)
    finally:
        browser.close()
    return {"explorer_floor_s": cold, "explorer_floor_revisit_s": revisit}
