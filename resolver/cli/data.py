"""data.py's command: flags, output and exit codes (its usage is the root data.py's docstring; docs/data.md)."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Sequence

from resolver.cli.base import ArgParser

if TYPE_CHECKING:
    from resolver.catalog.manifest import Manifest
    from resolver.core.progress import Bar
    from resolver.share.scopes import Scope
    from resolver.share.sync import Outcome, StatusRow

SCOPE_HELP = "eval <eval_id> | cohort <data/set/Model> | dataset <data/name.json>"


def build_parser() -> ArgParser:
    from resolver.share import DEFAULT_PATH, SCOPES

    parser = ArgParser(prog="data.py", description="Content-addressed blob storage for evaluation data.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common(p: ArgParser, scope_required: bool) -> None:
        nargs = None if scope_required else "?"
        p.add_argument("scope", nargs=nargs, choices=SCOPES, help=SCOPE_HELP)
        p.add_argument("target", nargs=nargs, help="eval_id, cohort directory or dataset file")
        p.add_argument("--full", action="store_true", help="dataset scope: include every cohort's raw run folders")
        p.add_argument("--cohort", help="eval scope: only this cohort (when an eval_id appears in several)")
        add_shared(p)

    def add_shared(p: ArgParser) -> None:
        p.add_argument("--remote", help="remote URL (overrides $REASONSCAPE_REMOTE and the manifest's)")
        p.add_argument("--manifest", default=str(DEFAULT_PATH), help="manifest file (default data/manifest.json)")
        p.add_argument("--quiet", action="store_true", help="no progress bars")

    pull = sub.add_parser("pull", help="download and unpack blobs")
    common(pull, True)
    pull.add_argument("--force", action="store_true", help="replace local copies that differ from the manifest")
    push = sub.add_parser("push", help="pack, upload and record in the manifest")
    common(push, True)
    status = sub.add_parser("status", help="local vs remote vs manifest")
    common(status, False)
    status.add_argument("--no-remote", action="store_true", help="do not contact the remote")
    prune = sub.add_parser("prune", help="remove cached blobs the manifest does not reference")
    add_shared(prune)
    prune.add_argument("--dry-run", action="store_true", help="only report what would be removed")
    remote = sub.add_parser("remote", help="show the remote in use, or set the manifest's remote")
    add_shared(remote)
    remote.add_argument("url", nargs="?", help="new remote for the manifest (file path, s3://bucket/prefix, https://...)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from resolver.core import UserError
    from resolver.share import choose_remote_url, load_manifest, open_remote, scopes as scopes, sync as datasync

    args = build_parser().parse_args(argv)
    manifest = load_manifest(args.manifest)
    if args.command == "prune":
        removed, freed = datasync.prune(manifest, args.dry_run)
        return print_prune(removed, freed, args.dry_run)
    if args.command == "remote":
        return set_or_show_remote(manifest, args.remote, args.url)
    if args.scope and not args.target:
        raise UserError(f"scope '{args.scope}' needs a target: {SCOPE_HELP}")
    url = choose_remote_url(args.remote, manifest.remote)
    remote = open_remote(url, manifest.data_dir, warn=write_above_bars)
    progress = None if args.quiet else progress_bar
    scope = scopes.parse_scope(args.scope, args.target, manifest, args.full, args.cohort)
    if args.command == "status":
        rows = datasync.status(scope, manifest, remote, not args.no_remote, progress)
        return print_status(rows, scope, url)
    if args.command == "push":
        outcomes = datasync.push(scope, manifest, remote, progress)
    else:
        outcomes = datasync.pull(scope, manifest, remote, args.force, progress)
    return print_outcomes(outcomes, args.command, scope, url)


def progress_bar(**kwargs: Any) -> Bar:
    """data.py's progress bars on stderr, shown only on a terminal (tqdm's disable=None);
    the library says what each counts. --quiet hands in no factory, so no bars."""
    from tqdm import tqdm

    return tqdm(disable=None, **kwargs)


def write_above_bars(line: str) -> None:
    """A warning (a retry, a corrupt download) on stderr, above any bar in progress."""
    from tqdm import tqdm

    tqdm.write(line, file=sys.stderr)


def human(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return str(size)


def print_outcomes(outcomes: list[Outcome], command: str, scope: Scope, url: str) -> int:
    from resolver.core import markdown_table

    rows = [(o.key, o.action, "—" if o.action == "missing" else human(o.size), o.detail) for o in outcomes]
    print(f"## data.py {command}: {scope.label} (remote {url})\n")
    print(markdown_table(rows, ("item", "action", "size", "detail"), ("l", "l", "r", "l")))
    counts: dict = {}
    for o in outcomes:
        counts[o.action] = counts.get(o.action, 0) + 1
    print("\n" + ", ".join(f"{n} {action}" for action, n in sorted(counts.items())))
    failed = counts.get("failed", 0)
    if failed:
        print(f"data.py: {failed} item(s) failed; run the same command again to resume", file=sys.stderr)
    missing = [f"{o.detail.removeprefix('never pushed: ')} ({o.key})" for o in outcomes if o.action == "missing"]
    if missing:
        print(f"data.py: {len(missing)} item(s) of {scope.label} were never pushed, so this copy is incomplete: "
              f"{'; '.join(missing)}", file=sys.stderr)
    return 1 if failed or missing else 0


def print_status(rows: list[StatusRow], scope: Scope, url: str) -> int:
    from resolver.core import markdown_table

    print(f"## data.py status: {scope.label} (remote {url})\n")
    if not rows:
        print("nothing in this scope: no local run folders or DB files, and no manifest entries")
        return 0
    table = [(r.key, r.kind, ", ".join(r.eval_ids) or "-", r.state, r.remote, "yes" if r.cached else "no",
              human(r.size), r.files) for r in rows]
    print(markdown_table(table, ("item", "kind", "evals / datasets", "state", "on remote", "cached", "size", "files"),
                         ("l", "l", "l", "l", "l", "l", "r", "r")))
    counts: dict = {}
    for r in rows:
        counts[r.state] = counts.get(r.state, 0) + 1
    print("\n" + ", ".join(f"{n} {state}" for state, n in sorted(counts.items())))
    return 0


def print_prune(removed: int, freed: int, dry_run: bool) -> int:
    verb = "would remove" if dry_run else "removed"
    print(f"prune: {verb} {removed} unreferenced cache file(s), {human(freed)}")
    return 0


def set_or_show_remote(manifest: Manifest, flag: str | None, url: str | None) -> int:
    from resolver.share import choose_remote_url, open_remote, update_manifest

    if url is None:
        print(choose_remote_url(flag, manifest.remote))
        return 0
    open_remote(url, manifest.data_dir)      # validates the URL's form
    with update_manifest(manifest.path) as fresh:
        fresh.remote = url
    print(f"remote set to {url} in {manifest.path}")
    return 0

