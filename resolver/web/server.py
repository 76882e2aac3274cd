"""Start-up plumbing shared by leaderboard.py, explorer.py and spiderweb.py (their flags are
resolver/cli/webapp.py).

Every app takes the same serving flags (README.md): --port, --url-base-pathname, --debug, and
--host, which defaults to 127.0.0.1 so a results browser is never exposed by accident.

* The socket is bound before "serving on ..." is printed. Without --port the app's seed
  default is tried first and, when it is busy, the next free port above it (so explorer.py
  and spiderweb.py, both 8051 by default, run side by side); the URL printed is the one
  really served. An explicit --port that is busy, or a --host that cannot be bound, is a
  one-line error (exit 2).
* Every request's Host header must name the bound host (or a loopback name when bound to
  loopback), or one of --allowed-hosts: a DNS-rebinding page cannot read a loopback app.
* Nothing is fetched from outside in any mode: assets are served locally and --debug has
  Dash's version check off.
"""
from __future__ import annotations

import errno
import ipaddress
import logging
import re
import socket
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from typing import Protocol

    import dash
    from flask import Flask
    from werkzeug.serving import BaseWSGIServer

    class _ServeFlags(Protocol):
        """The flags `serve` reads (argparse's namespace; argparse belongs to resolver/cli)."""

        port: int | None
        url_base_pathname: str
        host: str
        debug: bool

from resolver.core import UserError

DEFAULT_HOST = "127.0.0.1"
# Where the other apps are linked to by default: explorer first on 8051, then spiderweb on the next free port.
DEFAULT_LINK_PORTS = {"leaderboard": 8050, "explorer": 8051, "spiderweb": 8052}
PORT_SEARCH = 50            # how many ports above the default are tried when it is busy
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
_PATH_SEGMENT = re.compile(r"^[A-Za-z0-9._~-]+$")


def app_links(args: object) -> dict:
    """{app: base URL} of the three apps for cross-app links (flags, else localhost defaults)."""
    links = {}
    for app, port in DEFAULT_LINK_PORTS.items():
        url = getattr(args, f"{app}_url", None) or f"http://localhost:{port}/"
        if not re.match(r"^https?://[^\s]+$", url):
            raise UserError(f"--{app}-url {url!r} is not an http(s) URL; valid: e.g. http://localhost:{port}/")
        links[app] = url if url.endswith("/") else url + "/"
    return links


def normalize_base_pathname(text: str) -> str:
    """'/rs', 'rs/', '/rs/' -> '/rs/'; '/' stays '/'. Only plain URL path segments are allowed."""
    segments = [s for s in (text or "/").strip().split("/") if s]
    for segment in segments:
        if not _PATH_SEGMENT.match(segment) or segment in (".", ".."):
            raise UserError(f"--url-base-pathname {text!r} is not a plain URL path; "
                            "valid: / or a prefix like /rs/ (letters, digits, . _ ~ -)")
    return "/" + "".join(s + "/" for s in segments)


def check_port(port: int | None) -> int | None:
    if port is not None and not 1 <= port <= 65535:
        raise UserError(f"--port {port} is out of range; valid: 1-65535")
    return port


def make_app(title: str, url_base_pathname: str = "/") -> dash.Dash:
    """A Dash app with our stylesheet, served under url_base_pathname, no external assets.

    Nothing is loaded from the internet (the apps must work offline), and the app serves
    only its own routes and Dash's bundled component files: never arbitrary files.
    """
    import dash

    from resolver.web import theme  # plotly: not before an app is built

    app = dash.Dash(
        __name__,
        title=title,
        url_base_pathname=normalize_base_pathname(url_base_pathname),
        assets_folder=str(theme.ASSETS_DIR),
        serve_locally=True,
        suppress_callback_exceptions=False,
        # dash's docstring says None leaves the tab title alone; its annotation says str only
        update_title=None,  # type: ignore[arg-type]
        meta_tags=[{"name": "viewport", "content": "width=device-width, initial-scale=1"},
                   {"name": "color-scheme", "content": "light dark"}],
    )
    return app


def allowed_hosts(host: str, extra: str = "") -> set | None:
    """Host names the Host header may carry; None = any (bound to every interface, no list given)."""
    names = {h.strip().lower().strip("[]") for h in (extra or "").split(",") if h.strip()}
    if "*" in names:
        return None
    bound = host.strip().lower().strip("[]")
    if bound in ("0.0.0.0", "::", ""):
        return names | set(LOOPBACK_NAMES) if names else None
    names.add(bound)
    if _is_loopback(bound):
        names.update(LOOPBACK_NAMES)
    return names


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """'example.com:8050' -> 'example.com', '[::1]:8050' -> '::1' (lower case)."""
    header = (header or "").strip().lower()
    if header.startswith("["):
        return header[1:header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def install_host_check(flask_app: Flask, names: set | None) -> None:
    """Refuse (403) requests whose Host header is not one of `names` (DNS rebinding)."""
    if names is None:
        return
    from flask import request

    @flask_app.before_request
    def _check_host() -> tuple[str, int, dict[str, str]] | None:
        if host_name(request.headers.get("Host", "")) not in names:
            return ("Host header not allowed; start the app with --allowed-hosts NAME to accept it\n", 403,
                    {"Content-Type": "text/plain"})
        return None


def bind(app: dash.Dash, host: str, port: int | None, default_port: int) -> tuple[BaseWSGIServer, int]:
    """A werkzeug server bound to host:port, or to the first free port from default_port.

    The socket is bound here (werkzeug would print its own two lines and exit 1 on a busy
    port) and handed to werkzeug. Returns (server, port). One-line UserError when the
    address cannot be bound.
    """
    from werkzeug.serving import make_server

    candidates = [port] if port is not None else list(range(default_port, min(default_port + PORT_SEARCH, 65536)))
    last_error = None
    for candidate in candidates:
        try:
            sock = _listening_socket(host, candidate)
        except OSError as exc:          # busy port, unknown host, address not on this machine
            last_error = exc
            if not _port_busy(exc):
                break
            continue
        with sock:                      # werkzeug serves a duplicate of this descriptor (socket.fromfd)
            server = make_server(host, candidate, app.server, threaded=True, fd=sock.fileno())
        return server, candidate
    reason = getattr(last_error, "strerror", None) or str(last_error)
    if last_error is not None and not _port_busy(last_error):
        raise UserError(f"cannot bind --host {host!r}: {reason}; valid: an address of this machine such as "
                        "127.0.0.1, ::1 or 0.0.0.0")
    if port is not None:
        raise UserError(f"port {port} on {host} is already in use; choose another --port (or leave --port out "
                        "to take the next free one)")
    raise UserError(f"ports {candidates[0]}-{candidates[-1]} on {host} are all in use; pass a free --port")


def _listening_socket(host: str, port: int) -> socket.socket:
    from werkzeug.serving import select_address_family

    family = select_address_family(host, port)     # the family werkzeug will use for this socket
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as werkzeug does; a listener still blocks
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _port_busy(exc: OSError) -> bool:
    return getattr(exc, "errno", None) in (errno.EADDRINUSE, errno.EACCES)


def shown_url(host: str, port: int, base: str) -> str:
    shown = "localhost" if host in ("127.0.0.1", "localhost") else (f"[{host}]" if ":" in host else host)
    return f"http://{shown}:{port}{base}"


def serve(app: dash.Dash, args: _ServeFlags, announce: Callable[[str], None]) -> None:
    """Bind, hand `announce` the URL really served (the command prints it), then serve until Ctrl-C."""
    check_port(args.port)
    base = normalize_base_pathname(args.url_base_pathname)
    install_host_check(app.server, allowed_hosts(args.host, getattr(args, "allowed_hosts", "")))
    if args.debug:
        # Dev tools without the reloader (it would re-run the precompute) and without the
        # version check (the one request Dash would make to the outside).
        app.enable_dev_tools(debug=True, dev_tools_hot_reload=False, dev_tools_disable_version_check=True)
    else:
        _quiet_server_banners(app)
    server, port = bind(app, args.host, args.port, getattr(args, "default_port", 8050))
    announce(shown_url(args.host, port, base))
    try:
        server.serve_forever()
    finally:
        server.server_close()


def _quiet_server_banners(app: dash.Dash) -> None:
    """Our own line says where to go; werkzeug's per-request log would only add noise."""
    app.logger.setLevel(logging.WARNING)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
