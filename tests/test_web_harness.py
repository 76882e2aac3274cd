"""The browser harness itself: a tiny Dash app served on loopback, driven by headless Chromium."""
from __future__ import annotations

import pytest

from tests.support.browser import Browser, DashServer, browser_marks

pytestmark = browser_marks()


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    yield b
    b.close()


def _counter_app(base="/"):
    from dash import Input, Output, html

    from resolver.web.server import make_app

    app = make_app("smoke", base)
    app.layout = html.Div([html.Button("add", id="add", n_clicks=0), html.Span("0", id="count")])

    @app.callback(Output("count", "children"), Input("add", "n_clicks"))
    def show(n):
        return str(n * 2)

    return app


def test_callback_round_trip_in_real_browser(browser):
    with DashServer(_counter_app()) as server:
        browser.open(server.url("/"), ready_selector="#add")
        browser.wait_until(lambda d: d.find_element("css selector", "#count").text == "0", message="initial render")
        browser.click("#add")
        browser.click("#add")
        browser.wait_until(lambda d: d.find_element("css selector", "#count").text == "4", message="callback output")
        assert browser.console_errors() == []


def test_base_pathname_prefix(browser):
    with DashServer(_counter_app("rs")) as server:
        browser.open(server.url("/rs/"), ready_selector="#add")
        browser.click("#add")
        browser.wait_until(lambda d: d.find_element("css selector", "#count").text == "2", message="callback under /rs/")
        assert browser.console_errors() == []


def test_console_errors_are_seen(browser):
    """The console check must be able to fail: a page that logs an error is reported."""
    with DashServer(_counter_app()) as server:
        browser.open(server.url("/"), ready_selector="#add")
        browser.driver.execute_script("console.error('deliberate failure for the harness test')")
        errors = browser.console_errors()
        assert any("deliberate failure" in e for e in errors)
