"""Start-up plumbing shared by leaderboard.py, explorer.py and spiderweb.py.

Every app takes the same serving flags (seed 000): --port, --url-base-pathname, --debug, and
--host, which defaults to 127.0.0.1 so a results browser is never exposed by accident.
"""
from __future__ import annotations

import re

import dash

from resolver.errors import UserError

DEFAULT_HOST = "127.0.0.1"
_PATH_SEGMENT = re.compile(r"^[A-Za-z0-9._~-]+$")


def add_server_args(parser, default_port: int) -> None:
    """Add the serving flags every web app shares."""
    parser.add_argument("--port", type=int, default=default_port,
                        help=f"web server port (default {default_port})")
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--url-base-pathname", default="/",
                        help="URL prefix when served behind a reverse proxy, e.g. /rs/ (default /)")
    parser.add_argument("--debug", action="store_true",
                        help="Dash debug mode: dev tools, callback errors shown in the page, auto-reload")


def normalize_base_pathname(text: str) -> str:
    """'/rs', 'rs/', '/rs/' -> '/rs/'; '/' stays '/'. Only plain URL path segments are allowed."""
    segments = [s for s in (text or "/").strip().split("/") if s]
    for segment in segments:
        if not _PATH_SEGMENT.match(segment) or segment in (".", ".."):
            raise UserError(f"--url-base-pathname {text!r} is not a plain URL path; "
                            "valid: / or a prefix like /rs/ (letters, digits, . _ ~ -)")
    return "/" + "".join(s + "/" for s in segments)


def check_port(port: int) -> int:
    if not 1 <= port <= 65535:
        raise UserError(f"--port {port} is out of range; valid: 1-65535")
    return port


def make_app(title: str, url_base_pathname: str = "/") -> dash.Dash:
    """A Dash app with our stylesheet, served under url_base_pathname, no external assets.

    Nothing is loaded from the internet (the apps must work offline), and the app serves
    only its own routes and Dash's bundled component files: never arbitrary files.
    """
    from resolver.web import theme

    app = dash.Dash(
        __name__,
        title=title,
        url_base_pathname=normalize_base_pathname(url_base_pathname),
        assets_folder=str(theme.ASSETS_DIR),
        serve_locally=True,
        suppress_callback_exceptions=False,
        update_title=None,
    )
    return app


def serve(app: dash.Dash, args, name: str) -> None:
    """Run the app's server until Ctrl-C; prints the address to open."""
    check_port(args.port)
    base = normalize_base_pathname(args.url_base_pathname)
    shown_host = "localhost" if args.host in ("127.0.0.1", "localhost") else args.host
    print(f"{name}: serving on http://{shown_host}:{args.port}{base}  (Ctrl-C to stop)", flush=True)
    if not args.debug:
        _quiet_server_banners(app)
    # The reloader would re-run start-up (and the precompute) in a child process: keep it off.
    app.run(host=args.host, port=args.port, debug=bool(args.debug), use_reloader=False)


def _quiet_server_banners(app: dash.Dash) -> None:
    """Our own line above says where to go; Dash's, Flask's and werkzeug's banners (and the
    per-request log) would only repeat it, with a red warning meant for deployers."""
    import logging

    import flask.cli

    app.logger.setLevel(logging.WARNING)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    flask.cli.show_server_banner = lambda *args, **kwargs: None
