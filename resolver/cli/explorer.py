"""explorer.py: 3-D accuracy surfaces, linked panels and point inspection in the browser (default :8051)."""
import sys

from resolver.cli.base import ArgParser
from resolver.cli.webapp import add_server_args, serve_app


def main(argv=None):
    parser = ArgParser(prog="explorer.py", description="Interactive 3-D accuracy surfaces of a dataset's views.")
    parser.add_argument("dataset", help="dataset config JSON, e.g. data/r12.json, or a PointsDB file, e.g. pointsdb-interview.db")
    parser.add_argument("--tokenizer", default=None,
                        help="tokenizer for the prompt FFT panel: a local path, a cached hub id, or 'bytes' "
                             "(default: each eval's hf_id tokenizer when it is in the local cache)")
    add_server_args(parser, default_port=8051)
    args = parser.parse_args(argv)
    # the web libraries load only once the flags are read, so --help stays quick (docs/performance.md)
    from resolver.probe import eval_tokenizers
    from resolver.sim.r12study import missing_data_hint
    from resolver.web import app_links, check_port, normalize_base_pathname, open_app_dataset
    from resolver.web.explorer import build_app

    check_port(args.port)
    normalize_base_pathname(args.url_base_pathname)
    links = app_links(args)
    dataset, db = open_app_dataset(args.dataset, missing_hint=missing_data_hint)
    tokenizers = eval_tokenizers(db.evals(), args.tokenizer,
                                 warn=lambda text: print(f"explorer.py: {text}", file=sys.stderr))
    serve_app(build_app(dataset, db, url_base_pathname=args.url_base_pathname, tokenizers=tokenizers,
                        links=links), args, "explorer.py")

