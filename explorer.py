#!/usr/bin/env python3
"""explorer.py: 3-D accuracy surfaces, linked panels and point inspection in the browser (default :8051)."""
from resolver.cli import ArgParser, run_main


def main(argv=None):
    from resolver.web.data import open_app_dataset
    from resolver.web.explorer import build_app
    from resolver.web.server import add_server_args, check_port, normalize_base_pathname, serve

    parser = ArgParser(prog="explorer.py", description="Interactive 3-D accuracy surfaces of a dataset's views.")
    parser.add_argument("dataset", help="dataset config JSON, e.g. data/r12.json")
    parser.add_argument("--tokenizer", default=None,
                        help="tokenizer for the prompt FFT panel: a local path, a cached hub id, or 'bytes' "
                             "(default: no FFT panel)")
    add_server_args(parser, default_port=8051)
    args = parser.parse_args(argv)
    check_port(args.port)
    normalize_base_pathname(args.url_base_pathname)
    tokenizer = None
    if args.tokenizer:
        import os

        # transformers announces at import that torch is absent (we only need tokenizers): keep stderr clean.
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
        from resolver.probe.tokens import load_tokenizer

        tokenizer = load_tokenizer(args.tokenizer)
    dataset, db = open_app_dataset(args.dataset)
    serve(build_app(dataset, db, tokenizer, args.url_base_pathname), args, "explorer.py")


if __name__ == "__main__":
    run_main(main)
