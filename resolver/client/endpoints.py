"""Where the runner's requests go: `--apibase` read into an endpoint (URLs and key header).

Two forms of `--apibase` (docs/runner.md, "Servers"):

* an OpenAI-style base: ``http://host:3333`` (``/v1`` is added when there is no path),
  ``https://api.deepinfra.com/v1/openai``, Azure's v1 endpoint
  ``https://NAME.openai.azure.com/openai/v1``. Requests go to ``<base>/chat/completions``,
  the model list is ``<base>/models``, and the key travels as ``Authorization: Bearer KEY``;
* an Azure OpenAI deployment URL,
  ``https://NAME.openai.azure.com/openai/deployments/DEPLOY/chat/completions?api-version=2024-10-21``
  (with or without the trailing ``/chat/completions``). Requests go to
  ``<deployment>/chat/completions?<query>``, there is no model list to check, and the
  key travels as ``api-key: KEY`` (Azure's key header), taken from ``--apikey``, else
  ``$AZURE_OPENAI_API_KEY``, else ``$OPENAI_API_KEY``.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from urllib.parse import SplitResult, parse_qs, urlsplit

from resolver.core import UserError

AZURE_KEY_VARIABLE = "AZURE_OPENAI_API_KEY"
OPENAI_KEY_VARIABLE = "OPENAI_API_KEY"
_DEPLOYMENT_PATH = re.compile(r"^(?P<deployment>.*/openai/deployments/[^/]+?)(?:/chat/completions)?/*$")
_AZURE_HINT = ("for Azure OpenAI give the deployment URL "
               "https://NAME.openai.azure.com/openai/deployments/DEPLOY/chat/completions?api-version=2024-10-21 "
               "or the v1 endpoint https://NAME.openai.azure.com/openai/v1")


@dataclass(frozen=True)
class Endpoint:
    """An API base (no query, no trailing slash) plus what Azure deployments need."""

    base: str
    query: str = ""                  # e.g. "api-version=2024-10-21" (Azure deployments only)
    azure_deployment: bool = False

    def url(self, path: str) -> str:
        return f"{self.base}/{path}" + (f"?{self.query}" if self.query else "")

    def auth_headers(self, apikey: str | None) -> dict:
        if not apikey:
            return {}
        return {"api-key": apikey} if self.azure_deployment else {"Authorization": f"Bearer {apikey}"}

    def moved_to(self, base: str) -> "Endpoint":
        return replace(self, base=base)


def parse_endpoint(url: str | None) -> Endpoint:
    """Validate `--apibase` and read it into an Endpoint (UserError, one line, when it cannot work)."""
    if not isinstance(url, str) or not url.strip():
        raise UserError("--apibase is required in api mode; e.g. --apibase http://localhost:3333")
    text = url.strip()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise UserError(f"--apibase {url!r} is not a valid URL ({exc}); e.g. http://localhost:3333") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"--apibase {url!r} is not an http(s) URL; e.g. http://localhost:3333")
    if parts.fragment:
        raise UserError(f"--apibase {url!r} has a fragment (#...); give only scheme, host, port and path")
    deployment = _DEPLOYMENT_PATH.match(parts.path)
    if deployment:
        return _azure_deployment(url, parts, deployment.group("deployment"))
    if parts.query:
        raise UserError(f"--apibase {url!r} has a query string; give only scheme, host, port and path "
                        f"({_AZURE_HINT})")
    base = f"{parts.scheme}://{parts.netloc}{parts.path}".rstrip("/")
    if parts.path.strip("/") == "":
        base += "/v1"
    return Endpoint(base)


def _azure_deployment(url: str, parts: SplitResult, path: str) -> Endpoint:
    versions = parse_qs(parts.query, keep_blank_values=True).get("api-version", [])
    if len(versions) != 1 or not versions[0].strip():
        raise UserError(f"--apibase {url!r} is an Azure OpenAI deployment URL without one api-version; "
                        "add ?api-version=2024-10-21 (or the version your resource supports)")
    return Endpoint(f"{parts.scheme}://{parts.netloc}{path}", parts.query, azure_deployment=True)


def api_key_from_env(apibase: str | None) -> str | None:
    """The key to use when --apikey is not given: Azure's variable first for a deployment URL."""
    try:
        azure = parse_endpoint(apibase).azure_deployment
    except UserError:
        azure = False                # a bad --apibase is reported where it is used
    names = (AZURE_KEY_VARIABLE, OPENAI_KEY_VARIABLE) if azure else (OPENAI_KEY_VARIABLE,)
    for name in names:
        if os.environ.get(name):
            return os.environ[name]
    return None
