"""leaderboard.py: browse ReasonScore rankings of a dataset in the browser (default :8050)."""
from resolver.cli.base import ArgParser
from resolver.cli.webapp import add_server_args, serve_app


def main(argv=None):
    parser = ArgParser(prog="leaderboard.py", description="Interactive ReasonScore rankings with heat-map cells.")
    parser.add_argument("dataset", help="dataset config JSON, e.g. data/r12.json, or a PointsDB file, e.g. pointsdb-interview.db")
    parser.add_argument("--group-by", default="base_task",
                        help="aggregation dimension, fixed at start-up (default base_task; e.g. manifold.target_tokens)")
    add_server_args(parser, default_port=8050)
    args = parser.parse_args(argv)
    # the web libraries load only once the flags are read, so --help stays quick (docs/performance.md)
    from resolver.sim.r12study import missing_data_hint
    from resolver.web import app_links, check_group_by, check_port, normalize_base_pathname, open_app_dataset
    from resolver.web.leaderboard import build_app

    check_port(args.port)
    normalize_base_pathname(args.url_base_pathname)
    links = app_links(args)
    dataset, db = open_app_dataset(args.dataset, missing_hint=missing_data_hint)
    group_by = check_group_by(db, args.group_by)
    app = build_app(dataset, db, group_by, args.url_base_pathname, links=links)
    serve_app(app, args, "leaderboard.py")

