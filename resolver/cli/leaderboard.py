"""leaderboard.py: browse ReasonScore rankings of a dataset in the browser (default :8050)."""
from typing import Sequence

from resolver.cli.webapp import add_server_args, app_parser, open_served_dataset, serve_app


def main(argv: Sequence[str] | None = None) -> None:
    parser = app_parser("leaderboard.py", "Interactive ReasonScore rankings with heat-map cells.")
    parser.add_argument("--group-by", default="base_task",
                        help="aggregation dimension, fixed at start-up (default base_task; e.g. manifold.target_tokens)")
    add_server_args(parser, default_port=8050)
    args = parser.parse_args(argv)
    dataset, db, links = open_served_dataset(args)
    from resolver.web import check_group_by
    from resolver.web.leaderboard import build_app

    group_by = check_group_by(db, args.group_by)
    serve_app(build_app(dataset, db, group_by, args.url_base_pathname, links=links), args, "leaderboard.py")
