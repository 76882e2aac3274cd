"""explorer.py: 3-D accuracy surfaces, linked panels and point inspection in the browser (default :8051)."""
import sys
from typing import Sequence

from resolver.cli.webapp import add_server_args, app_parser, open_served_dataset, serve_app


def main(argv: Sequence[str] | None = None) -> None:
    parser = app_parser("explorer.py", "Interactive 3-D accuracy surfaces of a dataset's views.")
    parser.add_argument("--tokenizer", default=None,
                        help="tokenizer for the prompt FFT panel: a local path, a cached hub id, or 'bytes' "
                             "(default: each eval's hf_id tokenizer when it is in the local cache, else bytes, "
                             "as probe.py fft)")
    add_server_args(parser, default_port=8051)
    args = parser.parse_args(argv)
    dataset, db, links = open_served_dataset(args)
    from resolver.probe import fft_tokenizers
    from resolver.web.explorer import build_app

    # the same tokenizer per eval as probe.py fft, bytes included when none is given or cached
    tokenizers = fft_tokenizers(db.evals(), args.tokenizer,
                                warn=lambda text: print(f"explorer.py: {text}", file=sys.stderr))
    serve_app(build_app(dataset, db, url_base_pathname=args.url_base_pathname, tokenizers=tokenizers,
                        links=links), args, "explorer.py")
