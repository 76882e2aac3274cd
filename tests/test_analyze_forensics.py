"""analyze.py spiderweb / surface / compression / hazard / capacity end to end on the
hand-made forensics dataset (built through the real evaluate.py).

Most calls go through analyze.py's own main() in this process (the script is a thin
argparse wrapper, and a subprocess per call costs seconds of imports on a shared
2-core machine); the PNG and exit-code tests run the real script as a subprocess.
"""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from conftest import run_script
from PIL import Image
from test_analyze_forensics_fixture import MIDPOINT, SAMPLES, TABLE_SIZES, correct_count, forensics_dataset, model_eval_id  # noqa: F401

import analyze as analyze_script
from resolver.core.errors import UserError


@pytest.fixture
def analyze(capsys):
    """Run analyze.py's main() in-process; returns an object with returncode and stdout."""
    def call(*args):
        code = analyze_script.main([str(a) for a in args])
        return SimpleNamespace(returncode=code or 0, stdout=capsys.readouterr().out, stderr="")
    return call


def ok(proc):
    assert proc.returncode == 0, proc.stderr
    return proc


def png_files(directory, prefix):
    files = sorted(directory.glob(f"{prefix}*.png"))
    assert files, f"no {prefix}*.png written"
    for path in files:
        with Image.open(path) as image:
            image.verify()
    return files


def test_spiderweb_radar_one_png_per_eval_at_the_requested_size(forensics_dataset, tmp_path):
    ok(run_script("analyze.py", "spiderweb", forensics_dataset, "--group-by", "params.num_rows", "--filters",
               '{"base_task": "tables"}', "--width", "900", "--height", "650", "--output-dir", tmp_path))
    files = png_files(tmp_path, "spiderweb")
    assert len(files) == 2
    assert {model_eval_id(m) for m in MIDPOINT} == {f.stem.split("_")[-1] for f in files}
    with Image.open(files[0]) as image:
        assert image.size == (900, 650)


def test_spiderweb_bars_and_json_numbers(forensics_dataset, analyze, tmp_path):
    ok(analyze("spiderweb", forensics_dataset, "--format", "barpng", "--output-dir", tmp_path))
    assert len(png_files(tmp_path, "spiderweb")) == 2
    rows = json.loads(ok(analyze("spiderweb", forensics_dataset, "--format", "json")).stdout)
    loopy = next(r for r in rows if r["eval_id"] == model_eval_id("Loopy-3B") and r["group"] == "tables")
    failures = [SAMPLES - correct_count("Loopy-3B", "tables", s) for s in TABLE_SIZES]
    truncated = sum((f + 1) // 2 for f in failures)
    assert loopy["truncated_ratio"] == pytest.approx(truncated / (SAMPLES * len(TABLE_SIZES)))
    assert loopy["truncation_marked"] is True
    assert loopy["low"] <= loopy["center"] <= loopy["high"]
    assert max(r["tokens_scaled"] for r in rows) == pytest.approx(1.0)


def test_surface_writes_a_grid_per_task_and_json_cells(forensics_dataset, analyze, tmp_path):
    ok(analyze("surface", forensics_dataset, "--output-dir", tmp_path))
    assert [f.name for f in png_files(tmp_path, "surface")] == ["surface_arithmetic.png"]
    data = json.loads(ok(analyze("surface", forensics_dataset, "--format", "json", "--split-by", "none")).stdout)
    cells = data["all"]["arithmetic/depth_length"]
    assert len(cells) == 2 * 6  # two evals x (2 depths x 3 lengths)
    steady = [c for c in cells if c["eval_id"] == model_eval_id("Steady-7B")]
    assert {(c["params.max_depth"], c["params.length"]) for c in steady} == {(d, n) for d in (1, 2) for n in (4, 8, 16)}


def test_surface_rejects_an_unknown_view(forensics_dataset):
    proc = run_script("analyze.py", "surface", forensics_dataset, "--view", "nope")
    assert proc.returncode == 2
    assert "unknown view 'nope'" in proc.stderr and "depth_length" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_compression_panels_and_loop_share(forensics_dataset, analyze, tmp_path):
    ok(analyze("compression", forensics_dataset, "--output-dir", tmp_path))
    assert [f.name for f in png_files(tmp_path, "compression")] == ["compression_arithmetic.png",
                                                                  "compression_tables.png"]
    rows = json.loads(ok(analyze("compression", forensics_dataset, "--format", "json", "--split-by", "none",
                                 "--group-by", "none")).stdout)
    by = {(r["eval_id"], r["panel"]): r for r in rows}
    loopy = next(k for k in by if k[0].startswith("Loopy-3B") and k[1] == "truncated")
    assert by[loopy]["loop_like_share"] == 1.0          # every designed loop compresses hard
    steady = next(k for k in by if k[0].startswith("Steady-7B") and k[1] == "correct")
    assert by[steady]["loop_like_share"] == 0.0
    assert not any(k[0].startswith("Steady-7B") and k[1] == "truncated" for k in by)


def test_hazard_files_per_task_and_eval_and_json_counts(forensics_dataset, analyze, tmp_path):
    ok(analyze("hazard", forensics_dataset, "--output-dir", tmp_path))
    assert len(png_files(tmp_path, "hazard")) == 4      # 2 tasks x 2 evals (default split)
    records = json.loads(ok(analyze("hazard", forensics_dataset, "--format", "json", "--split-by", "eval_id",
                                    "--filters", '{"base_task": "tables"}', "--bucket-size", "128")).stdout)
    steady = next(r for r in records if r["eval_id"] == model_eval_id("Steady-7B"))
    first = steady["buckets"][0]
    assert first["at_risk"] == SAMPLES * len(TABLE_SIZES)
    assert sum(b["censored"] for b in steady["buckets"]) == 0
    correct = sum(correct_count("Steady-7B", "tables", s) for s in TABLE_SIZES)
    # no censoring: the final cumulative incidence of correct answers is the plain share
    assert steady["buckets"][-1]["cif_correct"] == pytest.approx(correct / (SAMPLES * len(TABLE_SIZES)))


def test_capacity_frontier_recovers_the_designed_midpoints(forensics_dataset, analyze):
    data = json.loads(ok(analyze("capacity", forensics_dataset, "--frontier", "--format", "json")).stdout)
    fits = {f["eval_id"]: f for f in data["summary"]}
    for model, midpoint in MIDPOINT.items():
        fit = fits[model_eval_id(model)]
        assert fit["fitted"] is True
        assert fit["x50"] == pytest.approx(midpoint, rel=0.15)
    text = ok(analyze("capacity", forensics_dataset, "--frontier")).stdout
    assert "| Steady-7B |" in text and "x50" in text


def test_capacity_peak_and_pngs(forensics_dataset, analyze, tmp_path):
    data = json.loads(ok(analyze("capacity", forensics_dataset, "--peak", "--format", "json")).stdout)
    summary = {r["eval_id"]: r for r in data["summary"]}
    # capacity = largest size whose accuracy center stays at or above 50%
    assert summary[model_eval_id("Steady-7B")]["capacity"] == 40.0
    assert summary[model_eval_id("Loopy-3B")]["capacity"] == 20.0
    for flag in ("--frontier", "--peak"):
        ok(analyze("capacity", forensics_dataset, flag, "--format", "png", "--output-dir", tmp_path))
    assert [f.name for f in png_files(tmp_path, "capacity")] == ["capacity_frontier.png", "capacity_peak.png"]


@pytest.mark.parametrize("args, message", [
    (["capacity", "--frontier", "--size-param", "params.nothing"], "no points have params.nothing"),
    (["hazard", "--filters", "{bad"], "--filters is not valid JSON"),
    (["spiderweb", "--filters", '{"eval_id": ["zzzzzz"]}'], "no points match"),
    (["compression", "--group-by", "weird"], "unknown dimension 'weird'"),
    (["capacity", "--peak", "--threshold", "1.5"], "--threshold must be between 0 and 1"),
])
def test_bad_values_are_user_errors(forensics_dataset, analyze, args, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace("[", r"\[")):
        analyze(args[0], forensics_dataset, *args[1:])


@pytest.mark.parametrize("args, message", [
    (["capacity"], "one of the arguments --frontier --peak is required"),
    (["capacity", "--frontier", "--peak"], "not allowed with argument"),
    (["hazard", "--bucket-size", "0"], "expected a positive integer"),
])
def test_bad_flags_exit_2_with_one_line(forensics_dataset, analyze, args, message):
    with pytest.raises(SystemExit) as exc:
        analyze(args[0], forensics_dataset, *args[1:])
    assert exc.value.code == 2


def test_real_script_bad_input_is_one_line_exit_2(forensics_dataset):
    proc = run_script("analyze.py", "hazard", forensics_dataset, "--filters", '{"colour": "red"}')
    assert proc.returncode == 2
    assert "unknown filter key 'colour'" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_missing_database_names_the_evaluate_command(tmp_path):
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps({"name": "d", "db": "d.db", "cohorts": []}))
    proc = run_script("analyze.py", "hazard", dataset)
    assert proc.returncode == 2 and "evaluate.py --dataset" in proc.stderr
