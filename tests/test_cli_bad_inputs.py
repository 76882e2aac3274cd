"""Every non-web CLI, run as a real subprocess with each bad input: exit 2, one line, nothing touched.

The inputs are the ones an unlucky user (or a hostile file) produces: JSON/YAML nested
100,000 deep, unreadable and non-UTF-8 files, a directory where a file belongs, a file
where a directory belongs, URLs that do not parse, numbers with thousands of digits,
absurd sizes, misspelt keys, globs that reach out of the dataset's tree. For each one
the bar is the same: exit status 2, exactly one line on stderr, no traceback, and the
working tree byte-for-byte unchanged (nothing written, nothing deleted).

One subprocess costs about a second of interpreter start-up here, so the table holds
one case per distinct input, not every combination.
"""
from __future__ import annotations

import json
import os

import pytest

from tests.conftest import REPO, run_script

TEMPLATE = str(REPO / "templates" / "zerocot-nosys.json")
SAMPLER = str(REPO / "samplers" / "greedy-2k.json")
TINY = str(REPO / "configs" / "tiny.yaml")
DEEP = "[" * 100_000 + "]" * 100_000


def _eval(glob="demo/m/*/*", **extra):
    return {"evaluate": {"glob": glob}, "filters": {"model": "m", "template": "t", "sampler": "s"},
            "label": "M", "groups": [], "tags": ["leaderboard"], **extra}


def _dataset(root, name, cohort_evals, **extra):
    cohort = root / "data" / name / "m"
    cohort.mkdir(parents=True)
    (cohort / "evals.json").write_text(json.dumps(cohort_evals))
    body = {"name": name, "db": f"{name}.db", "cohorts": [{"path": f"{name}/m/evals.json"}], **extra}
    (root / "data" / f"{name}.json").write_text(json.dumps(body))


@pytest.fixture(scope="module")
def area(tmp_path_factory):
    """A working directory holding every bad file the table refers to."""
    root = tmp_path_factory.mktemp("bad-inputs")
    (root / "deep.json").write_text(DEEP)
    (root / "deep.yaml").write_text(DEEP)
    (root / "latin1.json").write_bytes(b'{"name": "caf\xe9"}')
    (root / "a-dir.json").mkdir()
    (root / "a-file").write_text("I am a file\n")
    grid = {"name": "huge", "tasks": [{"name": "arithmetic", "manifolds": [{"id": "big", "grid": {
        "min_number": list(range(-1000, 1000)), "max_number": list(range(1000, 3000))}}]}]}
    (root / "huge-grid.yaml").write_text(json.dumps(grid))
    for name, params in {"hot": {"temperature": 3.0}, "top-p-0": {"top_p": 0}, "rep-0": {"repetition_penalty": 0},
                         "nan": {"temperature": float("nan")}}.items():
        (root / f"sampler-{name}.json").write_text(json.dumps(params))
    _dataset(root, "typo", [_eval(tag=["leaderboard"])])
    _dataset(root, "escape", [_eval(glob="/proc/self/**")])
    _dataset(root, "climb", [_eval(glob="../../../../../../etc/*")])
    _dataset(root, "dstypo", [_eval()], cohort=[])
    _dataset(root, "dbdir", [_eval()])
    (root / "data" / "dbdir.db").mkdir()
    _dataset(root, "deepfilter", [_eval()])
    (root / "data" / "deepfilter" / "m" / "evals.json").write_text(DEEP)
    # data.py: manifests that are broken in every way
    for name, content in {"deep": DEEP.encode(), "latin1": b'{"format": 1, "remote": "caf\xe9"}',
                          "dot": json.dumps({"format": 1, "runs": {".": {
                              "blob": "a" * 64, "content": "b" * 64, "size": 1, "bytes": 1, "files": 1,
                              "cohort": "x", "eval_ids": []}}}).encode()}.items():
        (root / "manifests" / name).mkdir(parents=True)
        (root / "manifests" / name / "manifest.json").write_bytes(content)
    (root / "manifests" / "isdir" / "manifest.json").mkdir(parents=True)
    return root


RUN = ["--template", TEMPLATE, "--sampler", SAMPLER, "--model", "m", "--offline", "1", "--output", "out"]

CASES = [
    # runner.py
    ("runner-deep-yaml", "runner.py", ["--config", "deep.yaml", *RUN], "nested too deeply"),
    ("runner-non-utf8", "runner.py", ["--config", "latin1.json", *RUN], "not UTF-8"),
    ("runner-unreadable", "runner.py", ["--config", "/proc/self/mem", *RUN], "cannot read config"),
    ("runner-config-dir", "runner.py", ["--config", "a-dir.json", *RUN], "is a directory"),
    ("runner-huge-grid", "runner.py", ["--config", "huge-grid.yaml", *RUN], "4,000,000 points"),
    ("runner-deep-template", "runner.py", ["--config", TINY, *RUN[:0], "--template", "deep.json", "--sampler",
                                           SAMPLER, "--model", "m", "--offline", "1", "--output", "out"],
     "nested too deeply"),
    ("runner-temperature-3", "runner.py", ["--config", TINY, "--template", TEMPLATE, "--sampler", "sampler-hot.json",
                                           "--model", "m", "--offline", "1", "--output", "out"], "temperature"),
    ("runner-top-p-0", "runner.py", ["--config", TINY, "--template", TEMPLATE, "--sampler", "sampler-top-p-0.json",
                                     "--model", "m", "--offline", "1", "--output", "out"], "top_p"),
    ("runner-repetition-0", "runner.py", ["--config", TINY, "--template", TEMPLATE, "--sampler",
                                          "sampler-rep-0.json", "--model", "m", "--offline", "1", "--output", "out"],
     "repetition_penalty"),
    ("runner-temperature-nan", "runner.py", ["--config", TINY, "--template", TEMPLATE, "--sampler",
                                             "sampler-nan.json", "--model", "m", "--offline", "1", "--output", "out"],
     "temperature"),
    ("runner-bad-ipv6", "runner.py", ["--config", TINY, "--template", TEMPLATE, "--sampler", SAMPLER, "--model", "m",
                                      "--apibase", "http://[::1", "--output", "out", "--cache", "c"], "not a valid URL"),
    ("runner-output-is-file", "runner.py", ["--config", TINY, *RUN[:-1], "a-file"], "is a file"),
    ("runner-empty-model", "runner.py", ["--config", TINY, "--template", TEMPLATE, "--sampler", SAMPLER,
                                         "--model", "", "--offline", "1", "--output", "out"], "model name"),
    ("runner-timeout-nan", "runner.py", ["--config", TINY, *RUN, "--timeout", "nan"], "--timeout"),
    ("runner-load-timeout", "runner.py", ["--config", TINY, *RUN, "--load-timeout", "-1"], "--load-timeout"),
    # evaluate.py (argument handling)
    ("evaluate-db-is-dir", "evaluate.py", ["--interview", "a-file", "--db", "a-dir.json"], "is a directory"),
    ("evaluate-dataset-db-is-dir", "evaluate.py", ["--dataset", "data/dbdir.json"], "is a directory"),
    ("evaluate-deep-dataset", "evaluate.py", ["--dataset", "deep.json"], "nested too deeply"),
    ("evaluate-non-utf8", "evaluate.py", ["--dataset", "latin1.json"], "not UTF-8"),
    ("evaluate-unknown-eval-key", "evaluate.py", ["--dataset", "data/typo.json"], "did you mean tags?"),
    ("evaluate-unknown-dataset-key", "evaluate.py", ["--dataset", "data/dstypo.json"], "did you mean cohorts?"),
    ("evaluate-absolute-glob", "evaluate.py", ["--dataset", "data/escape.json"], "relative pattern"),
    ("evaluate-climbing-glob", "evaluate.py", ["--dataset", "data/climb.json"], "without '..'"),
    ("evaluate-deep-evals", "evaluate.py", ["--dataset", "data/deepfilter.json"], "nested too deeply"),
    ("evaluate-parallel-huge", "evaluate.py", ["--dataset", "data/typo.json", "--parallel", "100000"], "at most"),
    # analyze.py and probe.py
    ("analyze-deep-dataset", "analyze.py", ["scores", "deep.json"], "nested too deeply"),
    ("analyze-dataset-dir", "analyze.py", ["scores", "a-dir.json"], "a-dir.json"),
    ("analyze-deep-filters", "analyze.py", ["scores", str(REPO / "data" / "demo.json"), "--filters",
                                            '{"a":' * 5000 + "1" + "}" * 5000], "nested too deeply"),
    ("analyze-5000-digit-filter", "analyze.py", ["scores", str(REPO / "data" / "demo.json"), "--filters",
                                                 '{"params.length": ' + "9" * 5000 + "}"], "64 bits"),
    ("analyze-huge-width", "analyze.py", ["scores", str(REPO / "data" / "demo.json"), "--width", "100000000"],
     "--width"),
    ("probe-deep-dataset", "probe.py", ["failure", "deep.json", "--point-id", "1"], "nested too deeply"),
    ("probe-deep-filters", "probe.py", ["truncation", str(REPO / "data" / "demo.json"), "--point-id", "1",
                                        "--filters", '{"a":' * 5000 + "1" + "}" * 5000], ""),
    # cohort.py (list and verify report a broken evals.json as a finding about that cohort, exit 0 / 1)
    ("cohort-deep-evals", "cohort.py", ["context", "data/deepfilter/m", "--eval-id", "abcdef", "--context", "100"],
     "nested too deeply"),
    ("cohort-typo-evals", "cohort.py", ["context", "data/typo/m", "--eval-id", "abcdef", "--context", "100"],
     "did you mean tags?"),
    ("cohort-context-negative", "cohort.py", ["context", "data/typo/m", "--eval-id", "abcdef", "--context", "-5"],
     "context"),
    # data.py
    ("data-deep-manifest", "data.py", ["status", "--manifest", "manifests/deep/manifest.json", "--no-remote"],
     "nested too deeply"),
    ("data-non-utf8-manifest", "data.py", ["status", "--manifest", "manifests/latin1/manifest.json", "--no-remote"],
     "not UTF-8"),
    ("data-manifest-is-dir", "data.py", ["status", "--manifest", "manifests/isdir/manifest.json", "--no-remote"],
     "is a directory"),
    ("data-dot-key", "data.py", ["pull", "cohort", "manifests/dot/x", "--force", "--manifest",
                                 "manifests/dot/manifest.json"], "relative path"),
    ("data-bad-remote", "data.py", ["status", "--manifest", "manifests/none/manifest.json", "--remote",
                                    "http://[::1"], "bad remote"),
    ("data-remote-set-bad", "data.py", ["remote", "http://[::1", "--manifest", "manifests/none/manifest.json"],
     "bad remote"),
]


def snapshot(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if os.path.isfile(path):
                with open(path, "rb") as handle:
                    out[rel] = handle.read()
            else:
                out[rel] = None
    return out


# Each script's first case runs as a real process (what a user's shell sees, interpreter and
# all); the rest call the script's main in this process (tests/support/in_process.py).
AS_PROCESS = {next(c[0] for c in CASES if c[1] == script) for script in {c[1] for c in CASES}}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_touches_nothing(area, case):
    name, script, args, fragment = case
    before = snapshot(area)
    repo_data = snapshot(REPO / "data")
    proc = run_script(script, *args, cwd=area, timeout=120, subprocess=name in AS_PROCESS)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, f"exit {proc.returncode}\n{proc.stdout[-1500:]}\n{proc.stderr[-3000:]}"
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert fragment in lines[0], lines[0]
    assert snapshot(area) == before                   # nothing written, nothing deleted
    assert snapshot(REPO / "data") == repo_data
