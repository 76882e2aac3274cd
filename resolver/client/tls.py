"""Which certificate authorities the runner trusts for https servers (docs/runner.md, "Private CAs").

The system's trust store is always loaded; OpenSSL builds it from ``$SSL_CERT_FILE``
and ``$SSL_CERT_DIR`` when they are set. On top of it, one extra bundle may be added,
the first of: ``--ca-bundle FILE``, ``$REQUESTS_CA_BUNDLE``, ``$CURL_CA_BUNDLE`` (the
variables Python's requests and curl users already have set for a private CA). A
bundle is added to the system store rather than replacing it, so the same settings
reach both a private server and a public API.
"""
from __future__ import annotations

import os
import ssl
from pathlib import Path

from resolver.core import UserError

CA_BUNDLE_VARIABLES = ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")
_WHAT = "give a PEM file of CA certificates (or a directory of them prepared with `openssl rehash`)"


def chosen_ca_bundle(flag: str | None, https: bool = True) -> tuple[str, str] | None:
    """(path, where it came from) of the extra CA bundle, or None.

    The variables only matter for https servers, so a stale one never stops a run
    against a local http server; the flag is always checked.
    """
    if flag:
        return flag, "--ca-bundle"
    if not https:
        return None
    for name in CA_BUNDLE_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value:
            return value, f"${name}"
    return None


def ssl_context_for(flag: str | None, https: bool = True) -> ssl.SSLContext | None:
    """A verifying SSL context with the chosen bundle added; None = the library's default context.

    UserError (one line) when the bundle is missing, unreadable or holds no certificate.
    """
    chosen = chosen_ca_bundle(flag, https)
    if chosen is None:
        return None
    path, where = chosen
    location = Path(path).expanduser()
    if not location.exists():
        raise UserError(f"{where} {path}: no such file; {_WHAT}")
    context = ssl.create_default_context()      # the system store, incl. $SSL_CERT_FILE / $SSL_CERT_DIR
    try:
        if location.is_dir():
            context.load_verify_locations(capath=str(location))
        else:
            context.load_verify_locations(cafile=str(location))
    except (ssl.SSLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc.__class__.__name__
        raise UserError(f"{where} {path} holds no usable CA certificate ({reason}); {_WHAT}") from None
    return context
