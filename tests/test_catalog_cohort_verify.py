"""cohort.py list / info / verify on good and broken cohorts (real files, real subprocesses)."""
from __future__ import annotations

import json
import re

import pytest
from conftest import REPO, run_script

from tests.support.cohort_factory import build_complete_cohort, build_data_dir, eval_entry, eval_id, write_run
from tests.support.progress import RecordingProgress


def table_rows(markdown: str) -> list:
    """Data rows of every markdown table in the text, as lists of cell strings."""
    rows = []
    for line in markdown.splitlines():
        if line.startswith("| ") and not line.startswith("| eval_id") and not line.startswith("| run folder"):
            rows.append([c.strip() for c in line.strip("|").split(" | ")])
    return rows


def lines_in(folder) -> int:
    return sum(len([l for l in p.read_text().splitlines() if l.strip()]) for p in folder.glob("*.ndjson"))


@pytest.fixture
def world(tmp_path):
    paths = build_data_dir(tmp_path, models=("Alpha-7B", "beta-moe"), count=5)
    paths["root"] = tmp_path
    return paths


def test_list_counts_folders_files_and_samples(world):
    alpha = world["cohorts"]["Alpha-7B"]
    write_run(alpha, "Alpha-7B", seed=77)                     # a second run of the same eval
    out = run_script("cohort.py", "list", cwd=world["root"], check=True).stdout
    rows = {r[0]: r for r in table_rows(out)}
    alpha_id = eval_id("Alpha-7B", "zeroshot-nosys", "greedy-max")
    beta_id = eval_id("beta-moe", "zeroshot-nosys", "greedy-max")
    assert set(rows) == {alpha_id, beta_id}
    folders = sorted(alpha.glob("20*"))
    assert rows[alpha_id][5:8] == ["2", str(sum(len(list(f.glob("*.ndjson"))) for f in folders)),
                                   str(sum(lines_in(f) for f in folders))]
    assert rows[beta_id][5:8] == ["1", "3", "15"]
    assert rows[alpha_id][8] == "arch:dense, size:small" and rows[alpha_id][9] == "leaderboard"


def test_list_path_glob_and_search(world):
    out = run_script("cohort.py", "list", "data/demo/Alpha*", cwd=world["root"], check=True).stdout
    assert "Alpha-7B" in out and "beta-moe" not in out
    out = run_script("cohort.py", "list", "--search", "BETA", cwd=world["root"], check=True).stdout
    assert "beta-moe" in out and "Alpha-7B" not in out
    out = run_script("cohort.py", "list", "--search", "^nothing-like-this$", cwd=world["root"], check=True).stdout
    assert "no cohorts found" in out
    bad = run_script("cohort.py", "list", "--search", "(", cwd=world["root"])
    assert bad.returncode == 2 and "not a valid regular expression" in bad.stderr
    missing = run_script("cohort.py", "list", "data/nowhere*", cwd=world["root"])
    assert missing.returncode == 2 and "no cohort matches" in missing.stderr


def test_orphans_and_info_detail(world):
    alpha = world["cohorts"]["Alpha-7B"]
    orphan = write_run(alpha, "Alpha-7B", sampler="some-other-sampler", seed=3)
    out = run_script("cohort.py", "list", str(alpha), cwd=world["root"], check=True).stdout
    assert "orphans" in out and orphan.name in out
    info = run_script("cohort.py", "info", str(alpha), cwd=world["root"], check=True).stdout
    matched = [f.name for f in alpha.glob("20*") if f != orphan]
    assert all(name in info for name in matched) and "glob `demo/Alpha-7B/" in info


def test_info_mentions_published_runs_that_are_not_pulled(world):
    alpha = world["cohorts"]["Alpha-7B"]
    run_script("data.py", "push", "cohort", str(alpha), "--remote", str(world["root"] / "remote"),
               cwd=world["root"], check=True)
    for folder in alpha.glob("20*"):
        import shutil

        shutil.rmtree(folder)
    out = run_script("cohort.py", "info", str(alpha), cwd=world["root"], check=True).stdout
    assert "1 run folder(s) are published but not here" in out and "no run folder matches" in out


def test_verify_passes_a_complete_cohort(tmp_path):
    built = build_complete_cohort(tmp_path, REPO)
    proc = run_script("cohort.py", "verify", "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert "OK" in proc.stdout and "14 / 14" in proc.stdout
    assert str(built["cohort"].relative_to(tmp_path)) in proc.stdout


def test_verify_reports_each_problem_with_file_and_line(tmp_path):
    built = build_complete_cohort(tmp_path, REPO)
    cohort, folder = built["cohort"], built["folder"]
    files = sorted(folder.glob("*.ndjson"))
    # 1. a record of another model on line 2 of the first file
    first = files[0].read_text().splitlines()
    record = json.loads(first[1])
    record["model"] = "impostor"
    first[1] = json.dumps(record)
    files[0].write_text("\n".join(first) + "\n")
    # 2. a crash-truncated last line in the second file
    with files[1].open("a") as handle:
        handle.write('{"task": "cut off')
    bad_line = len(files[1].read_text().splitlines())
    # 3. a point with a sample missing (drop the last line of the third file)
    third = files[2].read_text().splitlines()
    files[2].write_text("\n".join(third[:-1]) + "\n")
    # 4. a whole point missing
    files[3].unlink()
    # 5. an eval whose glob matches nothing
    entries = json.loads((cohort / "evals.json").read_text())
    entries.append(eval_entry("data/tiny-set/gamma", "gamma", sampler="never-run"))
    (cohort / "evals.json").write_text(json.dumps(entries))
    proc = run_script("cohort.py", "verify", str(cohort), "--quiet", cwd=tmp_path)
    assert proc.returncode == 1
    out = proc.stdout
    assert re.search(rf"{re.escape(files[0].name)}:2: model is 'impostor' but eval \w+ says 'gamma'", out)
    assert re.search(rf"{re.escape(files[1].name)}:{bad_line}: malformed JSON", out)
    assert re.search(rf"{re.escape(files[2].name)}:\d+: point .* has 3 of its 4 samples", out)
    assert re.search(r"task \w+( degree \d)?: \d+ of the \d+ points config tiny expects", out)
    assert "evals.json[1]: glob 'data/tiny-set/gamma/*_gamma_zeroshot-nosys_never-run/*' matches no run folder" in out


def test_verify_reports_a_broken_evals_json_and_continues(tmp_path):
    built = build_complete_cohort(tmp_path, REPO)
    other = tmp_path / "data" / "tiny-set" / "delta"
    other.mkdir()
    (other / "evals.json").write_text("[{\"evaluate\": ")
    proc = run_script("cohort.py", "verify", "--quiet", cwd=tmp_path)
    assert proc.returncode == 1
    assert "delta/evals.json" in proc.stdout and "not valid JSON" in proc.stdout
    assert f"## {built['cohort'].relative_to(tmp_path)}: OK" in proc.stdout


def test_verify_without_a_config_still_checks_records(world):
    proc = run_script("cohort.py", "verify", "--quiet", cwd=world["root"])
    assert proc.returncode == 0, proc.stdout
    assert "point completeness not checked" in proc.stdout


def test_verify_counts_each_evals_bytes_on_the_bar_handed_in(world, capfd):
    from resolver.catalog import verify_cohort

    alpha = world["cohorts"]["Alpha-7B"]
    write_run(alpha, "Alpha-7B", seed=77)                     # two run folders of one eval
    files = sorted(alpha.glob("20*/*.ndjson"))
    verify_cohort(alpha)
    assert capfd.readouterr().err == ""                       # no factory: no bar
    bars = RecordingProgress()
    verify_cohort(alpha, bars)
    (bar,) = bars.bars
    size = sum(len(f.read_bytes()) for f in files)
    assert bar.kwargs["desc"] == f"verify {eval_id('Alpha-7B', 'zeroshot-nosys', 'greedy-max')}"
    assert (bar.kwargs["unit"], bar.kwargs["total"], bar.counted, bar.kwargs["leave"]) == ("B", size, size, False)
    assert bar.closed
