"""Which proxy the chat client takes from the environment (docs/runner.md, proxies).

Expected answers are written out by hand from the conventions curl and Python share:
a scheme's own variable, then all_proxy; lower case before upper case; no_proxy
entries match the host and its subdomains, and "*" matches everything.
"""
from __future__ import annotations

import pytest

from resolver.client.http_policy import proxy_for

NAMES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
         "REQUEST_METHOD")


@pytest.fixture
def env(monkeypatch):
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_the_scheme_picks_its_own_variable(env):
    env.setenv("http_proxy", "http://plain:3128")
    env.setenv("https_proxy", "http://secure:3128")
    assert proxy_for("http://h:8000/v1") == "http://plain:3128"
    assert proxy_for("https://h/v1") == "http://secure:3128"


def test_lower_case_wins_over_upper_case(env):
    env.setenv("HTTPS_PROXY", "http://upper:1")
    env.setenv("https_proxy", "http://lower:2")
    assert proxy_for("https://h/v1") == "http://lower:2"


def test_no_proxy_matches_hosts_and_their_subdomains(env):
    env.setenv("ALL_PROXY", "socks5://p:1080")
    env.setenv("no_proxy", "localhost, .internal.example,10.0.0.7")
    assert proxy_for("http://localhost:3333/v1") is None
    assert proxy_for("https://gpu.internal.example/v1") is None
    assert proxy_for("http://10.0.0.7:8000/v1") is None
    assert proxy_for("https://api.example/v1") == "socks5://p:1080"
    env.setenv("no_proxy", "*")
    assert proxy_for("https://api.example/v1") is None
