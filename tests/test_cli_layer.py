"""The command layer (resolver/cli; docs/architecture.md): the missing-PointsDB hint comes from
the caller, the movies theme audit's two steps run from resolver.cli, building a parser stays
cheap, and a library run reports only through what it is handed. That nothing outside
resolver/cli parses argv, prints or exits is tests/test_layout.py's rule."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from resolver.core import UserError

REPO = Path(__file__).resolve().parent.parent


def _dataset_without_db(tmp_path, name: str = "lonely.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"name": "lonely", "db": str(tmp_path / "missing.db"),
                                "cohorts": []}), encoding="utf-8")
    return path


def test_a_missing_pointsdb_names_what_builds_it(tmp_path):
    from resolver.analysis import PointsDBMissing, open_dataset

    # no data/manifest.json beside the dataset: nothing can be pulled, so the hint says what to set up
    path = _dataset_without_db(tmp_path)
    with pytest.raises(PointsDBMissing) as caught:
        open_dataset(path)
    assert str(caught.value) == (f"PointsDB {tmp_path / 'missing.db'} does not exist yet; no published copy to pull "
                                 f"({tmp_path / 'manifest.json'} lists no missing.db): to share one, set a remote "
                                 f"(python data.py remote URL, or $REASONSCAPE_REMOTE) and push the database from a "
                                 f"machine that has it (python data.py push dataset {path}); or build it from your "
                                 f"own runs with: python evaluate.py --dataset {path}")
    assert (caught.value.dataset_path, Path(caught.value.db_path)) == (path, tmp_path / "missing.db")


@pytest.mark.parametrize("script", [["analyze.py", "scores"], ["probe.py", "failure", "--point-id", "1"],
                                    ["leaderboard.py"]])
def test_the_commands_name_the_simulated_data_for_a_missing_pointsdb(tmp_path, script):
    """The library's message names the pull and evaluate.py; every command (run_main) adds
    the simulated data that fills a shipped dataset such as the demo's."""
    from conftest import run_script

    demo = _dataset_without_db(tmp_path, "demo.json")
    proc = run_script(script[0], *script[1:2], demo, *script[2:])
    assert proc.returncode == 2 and proc.stdout == ""
    line = proc.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert line == (f"{script[0]}: error: PointsDB {tmp_path / 'missing.db'} does not exist yet; no published copy "
                    f"to pull ({tmp_path / 'manifest.json'} lists no missing.db): to share one, set a remote (python "
                    f"data.py remote URL, or $REASONSCAPE_REMOTE) and push the database from a machine that has it "
                    f"(python data.py push dataset {demo}); or generate simulated data with: python3 -m resolver.demo "
                    f"--no-serve; or build it from your own runs with: python evaluate.py --dataset {demo}")


def test_the_pull_hint_appears_where_a_manifest_lists_the_database(tmp_path):
    from resolver.analysis import open_dataset

    path = _dataset_without_db(tmp_path)
    digest = "ab" * 32
    entry = {"blob": digest, "content": digest, "size": 1, "bytes": 1, "files": 1, "datasets": ["lonely.json"]}
    manifest = tmp_path / "manifest.json"
    # a manifest that lists another database still cannot pull this one
    manifest.write_text(json.dumps({"format": 1, "runs": {}, "dbs": {"other.db": entry}}), encoding="utf-8")
    with pytest.raises(UserError, match="no published copy to pull"):
        open_dataset(path)
    manifest.write_text(json.dumps({"format": 1, "runs": {}, "dbs": {"missing.db": entry}}), encoding="utf-8")
    with pytest.raises(UserError) as caught:
        open_dataset(path)
    assert str(caught.value) == (f"PointsDB {tmp_path / 'missing.db'} does not exist yet; fetch the published "
                                 f"results with: python data.py pull dataset {path}; or build it from your own "
                                 f"runs with: python evaluate.py --dataset {path}")


def test_theme_agreement_commands(tmp_path, capsys):
    from resolver.cli import theme_agreement

    sample = (REPO / "docs" / "movies-theme-sample.tsv").read_text(encoding="utf-8").splitlines()
    film, theme = sample[0].split("\t")
    labels = tmp_path / "labels.tsv"
    labels.write_text(f"{film}\t{theme}\tyes\n", encoding="utf-8")
    assert theme_agreement.main(["compare", str(labels)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("1 pairs, agreement ")
    assert theme_agreement.main([]) == 2
    assert capsys.readouterr().err.strip() == theme_agreement.USAGE
    assert theme_agreement.main(["sample"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 150


_HELP_LOADS = """
import contextlib, io, runpy, sys
sys.argv = [sys.argv[1], "--help"]
try:
    with contextlib.redirect_stdout(io.StringIO()):
        runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit:
    pass
print(" ".join(sorted(m for m in ("scipy", "pandas", "duckdb", "matplotlib", "aiohttp", "dash", "plotly")
                     if m in sys.modules)))
"""


@pytest.mark.parametrize("script", ["analyze.py", "probe.py", "runner.py", "evaluate.py", "cohort.py", "data.py",
                                    "leaderboard.py", "explorer.py", "spiderweb.py"])
def test_help_loads_no_heavy_library(script):
    """Building a script's parser stays cheap: a flag's default that lives beside a computation
    importing scipy once made `analyze.py --help` take 2.5 s instead of 0.4 s; the web apps load
    Dash and pandas only once their flags are read."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _HELP_LOADS, script], cwd=REPO, capture_output=True, text=True,
                          check=True)
    assert proc.stdout.strip() == ""


# A failing web app start's import weight: each start runs in a process of its own, forked from
# one parent that has already imported the libraries those starts share (pydantic, DuckDB, the
# project's own packages; pandas too for the starts allowed it), so that each fork pays only for
# what its start adds, not for a Python start-up and those imports again. The parent checks
# that it holds none of the libraries its children must not load: whatever such library a child
# holds, its start loaded. A child ends as a process does (interpreter shutdown included), its
# stdout and stderr in files of its own.
_FORKED_STARTS = """
import importlib, json, os, runpy, sys
spec = json.loads(sys.argv[1])
for name in spec["preload"]:
    importlib.import_module(name)
early = sorted(m for m in spec["heavy"] if m in sys.modules)
if early:
    sys.exit(f"the shared imports loaded {early}")
results = {}
for key, argv in spec["runs"]:
    out, err, res = (os.path.join(spec["folder"], f"{len(results)}.{part}") for part in ("out", "err", "json"))
    pid = os.fork()
    if pid == 0:
        for fd, path in ((1, out), (2, err)):
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(handle, fd)
            os.close(handle)
        sys.argv = list(argv)
        code = None
        try:
            runpy.run_path(argv[0], run_name="__main__")
        except SystemExit as stop:
            code = stop.code
        loaded = sorted(m for m in spec["heavy"] if m in sys.modules)
        with open(res, "w") as fh:
            json.dump({"code": code, "loaded": loaded}, fh)
        sys.exit(0)
    _, status = os.waitpid(pid, 0)
    got = json.load(open(res)) if os.path.exists(res) else {}
    got.update(status=status, stdout=open(out).read(), stderr=open(err).read())
    results[key] = got
print(json.dumps(results))
"""
# what every failing start imports anyway; none of it imports a library of HEAVY
_SHARED_IMPORTS = ["pydantic", "yaml", "duckdb", "resolver.core", "resolver.cli", "resolver.config"]
HEAVY = ("scipy", "pandas", "matplotlib", "dash", "plotly")


def _forked_starts(folder: Path, preload: list[str], heavy: tuple[str, ...], runs: list) -> dict:
    """{key: {code, loaded, status, stdout, stderr}} of each (key, argv) run, argv[0] a script, each in its own fork."""
    import subprocess
    import sys

    folder.mkdir()
    spec = {"preload": preload, "heavy": list(heavy), "runs": runs, "folder": str(folder)}
    proc = subprocess.run([sys.executable, "-c", _FORKED_STARTS, json.dumps(spec)], cwd=REPO, capture_output=True,
                          text=True)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return json.loads(proc.stdout)


WEB_SCRIPTS = ["leaderboard.py", "explorer.py", "spiderweb.py"]


@pytest.fixture(scope="module")
def failing_web_starts(tmp_path_factory) -> dict:
    """Each web app on a missing dataset, a garbage PointsDB, a bad flag and an empty PointsDB."""
    from resolver.pointsdb.writer import PointsWriter

    tmp_path = tmp_path_factory.mktemp("web-starts")
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(bytes(range(256)) * 16)
    with PointsWriter(tmp_path / "empty.db", keep_existing=False):
        pass                                   # committed on exit: the schema, no points
    cases = {"dataset file not found": [str(tmp_path / "nope.json")], "garbage.db": [str(garbage)],
             "--url-base-pathname": [str(garbage), "--url-base-pathname", "/a b/"],
             # reading a PointsDB file's evals as its dataset takes pandas; the check itself does not
             "empty.db has no points yet": [str(tmp_path / "empty.db")]}
    runs = {allowed: [(f"{script} {fragment}", [script, *args]) for script in WEB_SCRIPTS
                      for fragment, args in cases.items() if ("empty" in fragment) == bool(allowed)]
            for allowed in ((), ("pandas",))}
    got = {}
    for allowed, group in runs.items():
        got.update(_forked_starts(tmp_path / f"runs-{len(allowed)}", _SHARED_IMPORTS + list(allowed),
                                  tuple(m for m in HEAVY if m not in allowed), group))
    return {"cases": cases, "got": got}


@pytest.mark.parametrize("script", WEB_SCRIPTS)
def test_a_failing_web_app_start_loads_no_heavy_library(script, failing_web_starts):
    """A web app on a missing dataset, a garbage PointsDB or a bad flag stops (exit 2) before pandas,
    Dash or plotly load: those cost ~2 s of CPU, a minute of wall time on a loaded machine
    (issue 46; docs/performance.md)."""
    for fragment, args in failing_web_starts["cases"].items():
        got = failing_web_starts["got"][f"{script} {fragment}"]
        assert (got["status"], got["code"], got["stdout"]) == (0, 2, ""), (args, got)
        assert got["loaded"] == [], (args, got)      # pandas, where allowed, is not among those looked for
        assert len(got["stderr"].splitlines()) == 1 and fragment in got["stderr"], (args, got["stderr"])


def test_a_run_without_a_reporter_shows_nothing(tmp_path, capsys):
    """The library reports through what the command hands it; with nothing handed, nothing shows."""
    from resolver.run import RunOptions, run_offline

    opts = RunOptions(config=str(REPO / "configs" / "tiny.yaml"), template=str(REPO / "templates" / "zerocot-nosys.json"),
                      sampler=str(REPO / "samplers" / "greedy-4k.json"), model="m", offline=1,
                      output=str(tmp_path), cache=str(tmp_path / "cache"))
    run = run_offline(opts)
    assert capsys.readouterr() == ("", "")
    written = sum(1 for f in run.folder.glob("*.ndjson") for _ in f.open())
    assert run.samples == written > 0 and run.steps == len(list(run.folder.glob("*.ndjson")))
