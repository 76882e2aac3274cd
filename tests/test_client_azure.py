"""Azure OpenAI deployment URLs: path, api-version query and the api-key header, over a real loopback server.

The fake Azure server below checks what Azure checks (the deployment path, exactly
one api-version, the key in `api-key`) and answers 404 / 401 the way Azure words them
otherwise, so a request that would not reach Azure does not reach it either.
"""
from __future__ import annotations

import json

import pytest
from aiohttp import web

from resolver.client.endpoints import Endpoint, api_key_from_env, parse_endpoint
from resolver.core.errors import UserError
from tests.conftest import run_script
from tests.support.runner import LoopbackServer, read_folder, run_folders, runner_args
from tests.test_client_chat import completion

DEPLOYMENT = "gpt-4o-mini"
API_VERSION = "2024-10-21"
KEY = "azure-secret"


class FakeAzure(LoopbackServer):
    """Answers only POST /openai/deployments/<DEPLOYMENT>/chat/completions?api-version=... with api-key."""

    def __init__(self):
        self.requests: list[tuple] = []         # (path, query, api-key header, Authorization header)
        super().__init__()

    def add_routes(self, app):
        app.router.add_post("/openai/deployments/{deployment}/chat/completions", self.deployment_chat)

    async def deployment_chat(self, request):
        await request.read()
        self.requests.append((request.path, dict(request.query), request.headers.get("api-key"),
                              request.headers.get("Authorization")))
        if request.match_info["deployment"] != DEPLOYMENT:
            return web.json_response({"error": {"code": "DeploymentNotFound", "message": "The API deployment "
                                      "for this resource does not exist."}}, status=404)
        if request.query.getall("api-version", []) != [API_VERSION]:
            return web.json_response({"error": {"code": "404", "message": "Resource not found"}}, status=404)
        if request.headers.get("api-key") != KEY:
            return web.json_response({"error": {"code": "401", "message": "Access denied due to invalid "
                                      "subscription key or wrong API endpoint."}}, status=401)
        return web.json_response(completion("Final Answer: 1"))

    async def chat(self, request):              # the OpenAI-style path is not Azure's
        return web.json_response({"error": {"code": "404", "message": "Resource not found"}}, status=404)

    async def list_models(self, request):
        return web.json_response({"error": {"code": "404", "message": "Resource not found"}}, status=404)


def deployment_url(base, tail="/chat/completions"):
    return f"{base}/openai/deployments/{DEPLOYMENT}{tail}?api-version={API_VERSION}"


def run(url, tmp_path, env):
    args = runner_args(url, tmp_path, model="gpt-4o-mini", extra=("--parallel", "4", "--task", "boolean"))
    return run_script("runner.py", *args, timeout=240, env={"OPENAI_API_KEY": "", "AZURE_OPENAI_API_KEY": "", **env})


def test_parse_endpoint_reads_both_forms():
    assert parse_endpoint("http://h:1") == Endpoint("http://h:1/v1")
    assert parse_endpoint("https://r.openai.azure.com/openai/v1/") == Endpoint("https://r.openai.azure.com/openai/v1")
    for tail in ("", "/", "/chat/completions"):
        endpoint = parse_endpoint(deployment_url("https://r.openai.azure.com", tail))
        assert endpoint == Endpoint("https://r.openai.azure.com/openai/deployments/gpt-4o-mini",
                                    "api-version=2024-10-21", azure_deployment=True)
    assert endpoint.url("chat/completions") == ("https://r.openai.azure.com/openai/deployments/gpt-4o-mini"
                                                "/chat/completions?api-version=2024-10-21")
    assert endpoint.auth_headers("k") == {"api-key": "k"}
    assert Endpoint("http://h/v1").auth_headers("k") == {"Authorization": "Bearer k"}
    assert Endpoint("http://h/v1").auth_headers(None) == {}


@pytest.mark.parametrize("url, says", [
    ("http://h/v1?x=1", "openai/v1"),                                        # the refusal names the forms that work
    ("https://r.openai.azure.com/openai/deployments/d/chat/completions", "api-version"),
    ("https://r.openai.azure.com/openai/deployments/d?api-version=1&api-version=2", "api-version"),
    ("https://r.openai.azure.com/openai/deployments/d?api-version=", "api-version"),
    ("http://h/v1#frag", "fragment"),
])
def test_urls_that_cannot_work_are_refused_with_what_works(url, says):
    with pytest.raises(UserError, match=says):
        parse_endpoint(url)


def test_the_azure_key_variable_is_used_for_deployment_urls_only(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "openai")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure")
    assert api_key_from_env(deployment_url("https://r.openai.azure.com")) == "azure"
    assert api_key_from_env("https://r.openai.azure.com/openai/v1") == "openai"
    monkeypatch.delenv("AZURE_OPENAI_API_KEY")
    assert api_key_from_env(deployment_url("https://r.openai.azure.com")) == "openai"


def test_the_runner_reaches_an_azure_deployment_with_api_version_and_api_key(tmp_path):
    with FakeAzure() as srv:
        proc = run(deployment_url(srv.url), tmp_path, {"AZURE_OPENAI_API_KEY": KEY})
        requests = list(srv.requests)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = read_folder(run_folders(tmp_path / "results")[0])
    assert records and all(r["answer"] == "Final Answer: 1" and r["model"] == "gpt-4o-mini" for r in records)
    # Every request (the preflight's included) took Azure's path, query and header, and no Bearer token.
    assert len(requests) == len(records) + 1
    assert {(p, json.dumps(q), k, a) for p, q, k, a in requests} == {
        (f"/openai/deployments/{DEPLOYMENT}/chat/completions", json.dumps({"api-version": API_VERSION}), KEY, None)}


def test_a_wrong_azure_key_stops_the_run_in_one_line(tmp_path):
    with FakeAzure() as srv:
        proc = run(deployment_url(srv.url, ""), tmp_path, {"AZURE_OPENAI_API_KEY": "wrong"})
        sent = len(srv.requests)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and sent == 1, proc.stderr
    assert "Access denied" in lines[0] and "AZURE_OPENAI_API_KEY" in lines[0]


def test_an_unknown_deployment_is_named_before_any_work(tmp_path):
    with FakeAzure() as srv:
        url = deployment_url(srv.url).replace(DEPLOYMENT, "no-such-deployment")
        proc = run(url, tmp_path, {"AZURE_OPENAI_API_KEY": KEY})
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "does not exist" in lines[0], proc.stderr
