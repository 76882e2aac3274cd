"""spiderweb.py: per-eval radar / bar profiles with archetypes in the browser (default :8051)."""
from typing import Sequence

from resolver.cli.webapp import add_server_args, app_parser, open_served_dataset, serve_app


def main(argv: Sequence[str] | None = None) -> None:
    parser = app_parser("spiderweb.py", "Per-model radar chart web UI with archetypes.")
    parser.add_argument("--group-by", default="base_task",
                        help="radar slice dimension (default base_task; single-task datasets: "
                             "manifold.target_tokens or params.operation)")
    add_server_args(parser, default_port=8051)
    args = parser.parse_args(argv)
    dataset, db, links = open_served_dataset(args)
    from resolver.web import check_group_by
    from resolver.web.spiderweb import build_app

    group_by = check_group_by(db, args.group_by)
    serve_app(build_app(dataset, db, group_by, args.url_base_pathname, links=links), args, "spiderweb.py")
