"""Start-up of the real web-app scripts: ports, one-line errors, the Host check, no outside requests."""
from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from tests.conftest import REPO
from tests.support.browser import Browser, free_port, needs_browser
from tests.support.web_dataset import shared_web_dataset

pytestmark = pytest.mark.slow  # the web-app scripts end to end: left out of the fast tier (docs/performance.md)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return shared_web_dataset(tmp_path_factory)


@contextlib.contextmanager
def started(script, *args, timeout=90):
    """Run a web-app script; yield (process, its "serving on" line) once it prints it; stop it after."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, str(REPO / script), *map(str, args)], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + timeout
        line = ""
        while "serving on" not in line:
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                raise AssertionError(f"{script} exited {proc.returncode}: {proc.stderr.read()}")
            assert time.monotonic() < deadline, f"{script} did not start"
        yield proc, line.strip()
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def _port_of(line: str) -> int:
    return int(re.search(r":(\d+)/", line).group(1))


def _get(url, host=None):
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read().decode()


def _run(script, *args):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, str(REPO / script), *map(str, args)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)


def test_explorer_and_spiderweb_both_start_with_their_default_port(dataset):
    """Both default to 8051 (README.md); the second takes the next free port and prints the URL it serves."""
    with started("explorer.py", dataset) as (_a, first), started("spiderweb.py", dataset) as (_b, second):
        a, b = _port_of(first), _port_of(second)
        assert a >= 8051 and b >= 8051 and a != b
        assert _get(f"http://127.0.0.1:{a}/")[1].count("_dash-config") == 1
        assert "spiderweb" in _get(f"http://127.0.0.1:{b}/")[1]


def test_busy_explicit_port_is_one_line_error_before_serving(dataset):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        proc = _run("leaderboard.py", dataset, "--port", port)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"port {port}" in proc.stderr and "already in use" in proc.stderr and "Traceback" not in proc.stderr
    assert "serving on" not in proc.stdout                     # nothing claims to serve before the bind


def test_unbindable_host_is_one_line_error(dataset):
    proc = _run("spiderweb.py", dataset, "--host", "203.0.113.7", "--port", free_port())   # TEST-NET: not ours
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "--host" in proc.stderr and "serving on" not in proc.stdout


def test_host_header_must_name_this_host(dataset):
    port = free_port()
    with started("leaderboard.py", dataset, "--port", port):
        assert _get(f"http://127.0.0.1:{port}/")[0] == 200
        assert _get(f"http://127.0.0.1:{port}/", host=f"localhost:{port}")[0] == 200
        with pytest.raises(urllib.error.HTTPError) as refused:        # a DNS-rebinding page's request
            _get(f"http://127.0.0.1:{port}/", host=f"attacker.example:{port}")
        assert refused.value.code == 403
        with pytest.raises(urllib.error.HTTPError):
            _get(f"http://127.0.0.1:{port}/_dash-layout", host="attacker.example")
    port = free_port()
    with started("leaderboard.py", dataset, "--port", port, "--allowed-hosts", "results.example"):
        assert _get(f"http://127.0.0.1:{port}/", host="results.example")[0] == 200


def test_host_check_unit():
    from resolver.web.server import allowed_hosts, host_name

    assert host_name("Example.com:8050") == "example.com" and host_name("[::1]:8050") == "::1"
    assert host_name("localhost") == "localhost"
    assert allowed_hosts("127.0.0.1") == {"127.0.0.1", "localhost", "::1"}
    assert allowed_hosts("10.1.2.3") == {"10.1.2.3"}
    assert allowed_hosts("0.0.0.0") is None                       # deliberately shared: any name
    assert allowed_hosts("0.0.0.0", "a.example") == {"a.example", "localhost", "127.0.0.1", "::1"}
    assert allowed_hosts("127.0.0.1", "*") is None


@needs_browser
def test_debug_mode_makes_no_outside_request(dataset):
    """--debug turns Dash's dev tools on but its version check off: every request the page makes stays local."""
    port = free_port()
    with started("spiderweb.py", dataset, "--port", port, "--debug"):
        _, html = _get(f"http://127.0.0.1:{port}/")
        config = json.loads(re.search(r'<script id="_dash-config" type="application/json">(.*?)</script>',
                                      html, re.S).group(1))
        assert config["ui"] is True and config.get("disable_version_check") is True
        browser = Browser()
        try:
            browser.open(f"http://127.0.0.1:{port}/", ready_selector="#sw-chart .js-plotly-plot")
            browser.wait_idle()
            time.sleep(1)
            urls = browser.driver.execute_script(
                "return performance.getEntriesByType('resource').map(e => e.name);")
            assert urls and all(u.startswith(f"http://127.0.0.1:{port}/") or u.startswith("data:") for u in urls), urls
        finally:
            browser.close()
