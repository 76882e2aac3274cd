"""spiderweb.py: per-eval radar / bar profiles with archetypes in the browser (default :8051)."""
from resolver.cli.base import ArgParser
from resolver.cli.webapp import add_server_args, serve_app


def main(argv=None):
    parser = ArgParser(prog="spiderweb.py", description="Per-model radar chart web UI with archetypes.")
    parser.add_argument("dataset", help="dataset config JSON, e.g. data/r12.json, or a PointsDB file, e.g. pointsdb-interview.db")
    parser.add_argument("--group-by", default="base_task",
                        help="radar slice dimension (default base_task; single-task datasets: "
                             "manifold.target_tokens or params.operation)")
    add_server_args(parser, default_port=8051)
    args = parser.parse_args(argv)
    # the web libraries load only once the flags are read, so --help stays quick (docs/performance.md)
    from resolver.sim.r12study import missing_data_hint
    from resolver.web import app_links, check_group_by, check_port, normalize_base_pathname, open_app_dataset
    from resolver.web.spiderweb import build_app

    check_port(args.port)
    normalize_base_pathname(args.url_base_pathname)
    links = app_links(args)
    dataset, db = open_app_dataset(args.dataset, missing_hint=missing_data_hint)
    group_by = check_group_by(db, args.group_by)
    serve_app(build_app(dataset, db, group_by, args.url_base_pathname, links=links), args, "spiderweb.py")

