"""The `reasonscape` command of an installed package: `reasonscape runner ...` is `python runner.py ...`.

The nine entry scripts stay files at the repository root (the README's commands); an
install ships them as the `reasonscape_scripts` package (pyproject.toml), and this
dispatcher runs the chosen one as `__main__` with the same argv, so flags, output and
exit codes are the script's own. Paths on the command line resolve against the current
directory, as they do for `python runner.py` (docs/architecture.md, "Installing").
"""
from __future__ import annotations

import runpy
import sys
from importlib.util import find_spec
from pathlib import Path

SCRIPTS = ("runner", "evaluate", "analyze", "probe", "leaderboard", "explorer", "spiderweb", "cohort", "data")
USAGE = ("usage: reasonscape {" + ",".join(SCRIPTS) + "} [arguments...]\n"
         "Runs the ReasonScape script of that name; `reasonscape <script> --help` lists its flags.")


def script_path(name: str) -> Path:
    """The file of one entry script: in a checkout the repository root, once installed the package."""
    checkout = Path(__file__).resolve().parents[2] / f"{name}.py"   # resolver/cli/commands.py -> the checkout
    if checkout.is_file():
        return checkout
    spec = find_spec(f"reasonscape_scripts.{name}")
    if spec is None or spec.origin is None:
        raise FileNotFoundError(f"the {name} script is not installed with this package")
    return Path(spec.origin)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if args else 2
    name = args[0].removesuffix(".py")
    if name not in SCRIPTS:
        sys.stderr.write(f"reasonscape: unknown script {args[0]!r}; valid: {', '.join(SCRIPTS)}\n")
        return 2
    path = script_path(name)
    sys.argv = [str(path), *args[1:]]
    runpy.run_path(str(path), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
