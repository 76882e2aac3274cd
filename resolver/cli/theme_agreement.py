"""`python -m resolver.cli.theme_agreement sample | compare LABELS.tsv`: the movies
theme audit's two steps (resolver.audit.theme_agreement; docs/movies-theme-audit.md)."""
from __future__ import annotations

import sys

from resolver.audit import theme_agreement

__all__ = ["main"]

USAGE = "usage: python -m resolver.cli.theme_agreement sample | compare LABELS.tsv"


def main(argv: list[str]) -> int:
    if argv[:1] == ["sample"]:
        for film, theme in theme_agreement.sample():
            print(f"{film}\t{theme}")
        return 0
    if len(argv) == 2 and argv[0] == "compare":
        result = theme_agreement.compare(theme_agreement.read_labels(argv[1]))
        print(f"{result['pairs']} pairs, agreement {result['agreement']:.1%}, Cohen's kappa {result['kappa']:.2f}")
        for key in ("reader_only", "catalogue_only"):
            for film, theme in result[key]:
                print(f"{key}\t{film}\t{theme}")
        return 0
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
