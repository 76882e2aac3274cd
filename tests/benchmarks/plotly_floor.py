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
from pathlib import Path
from types import SimpleNamespace

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


def floor_app(page: str):
    """The bare page and plotly.min.js as a WSGI app, in the shape DashServer serves (``.server``)."""
    script, html = plotly_js(), page.encode()

    def wsgi(environ, start_response):
        body, kind, cache = ((script, "text/javascript; charset=utf-8", "max-age=31536000")
                             if environ.get("PATH_INFO") == "/plotly.min.js"
                             else (html, "text/html; charset=utf-8", "no-cache"))
        start_response("200 OK", [("Content-Type", kind), ("Content-Length", str(len(body))), ("Cache-Control", cache)])
        return [body]

    return SimpleNamespace(server=wsgi)


def measure_floor(figures: list, config: dict, page_load, ready_js: str) -> dict:
    """Seconds to the first steady frame of the bare page: a fresh browser, then a revisit in it."""
    from tests.support.browser import Browser, DashServer

    browser = Browser(1400, 1000)
    try:
        with DashServer(floor_app(floor_page(figures, config))) as server:
            cold = page_load(browser, server.url("/"), ready_js)
            revisit = page_load(browser, server.url("/"), ready_js)
    finally:
        browser.close()
    return {"explorer_floor_s": cold, "explorer_floor_revisit_s": revisit}
