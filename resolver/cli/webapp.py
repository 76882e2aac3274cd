"""The serving flags and the "serving on" line shared by leaderboard.py, explorer.py and
spiderweb.py (docs/webapps.md); binding and serving are resolver/web.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    import dash

    from resolver.catalog import Dataset
    from resolver.cli.base import ArgParser
    from resolver.pointsdb import PointsDB


def app_parser(prog: str, description: str) -> ArgParser:
    """A web app's parser with its one positional argument, the dataset."""
    from resolver.cli.base import ArgParser

    parser = ArgParser(prog=prog, description=description)
    parser.add_argument("dataset", help="dataset config JSON, e.g. data/r12.json, or a PointsDB file, e.g. pointsdb-interview.db")
    return parser


def open_served_dataset(args: argparse.Namespace) -> tuple[Dataset, PointsDB, dict]:
    """Check the serving flags, then open the dataset: (dataset, PointsDB, links to the other apps).
    The web libraries load here, once the flags are read, so --help stays quick (docs/performance.md)."""
    from resolver.web import app_links, check_port, normalize_base_pathname

    check_port(args.port)
    normalize_base_pathname(args.url_base_pathname)
    links = app_links(args)
    from resolver.web import open_app_dataset  # after the flag checks: it loads the dataset readers

    dataset, db = open_app_dataset(args.dataset)
    return dataset, db, links


def add_server_args(parser: argparse.ArgumentParser, default_port: int) -> None:
    """Add the serving flags every web app shares (and the links to the other apps)."""
    from resolver.web import DEFAULT_HOST, DEFAULT_LINK_PORTS

    parser.add_argument("--port", type=int, default=None,
                        help=f"web server port (default {default_port}; when it is busy the next free one)")
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--allowed-hosts", default="",
                        help="extra comma-separated host names the Host header may carry (e.g. a reverse "
                             "proxy's name); default: the bound host, and loopback names when bound to loopback")
    parser.add_argument("--url-base-pathname", default="/",
                        help="URL prefix when served behind a reverse proxy, e.g. /rs/ (default /)")
    parser.add_argument("--debug", action="store_true",
                        help="Dash debug mode: dev tools and callback errors shown in the page (no version "
                             "check, no auto-reload)")
    for app, port in DEFAULT_LINK_PORTS.items():
        parser.add_argument(f"--{app}-url", default=None,
                            help=f"base URL of {app}.py for links between the apps (default http://localhost:{port}/)")
    parser.set_defaults(default_port=default_port)


def serve_app(app: dash.Dash, args: argparse.Namespace, name: str) -> None:
    """Serve until Ctrl-C, saying first which address is really served."""
    from resolver.web import serve

    serve(app, args, lambda url: print(f"{name}: serving on {url}  (Ctrl-C to stop)", flush=True))
