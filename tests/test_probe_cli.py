"""probe.py fft / failure / truncation end to end on the evaluate.py-built forensics dataset."""
from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import run_script
from PIL import Image
from test_analyze_forensics_fixture import LOOP_KINDS, ROW_CHARS, SAMPLES, correct_count, forensics_dataset, point_id_of  # noqa: F401

import probe as probe_script
from resolver.core.errors import UserError
from resolver.probe.fft import FREQUENCIES


@pytest.fixture
def probe(capsys):
    """probe.py's main() in this process (see test_analyze_forensics for why)."""
    def call(*args):
        code = probe_script.main([str(a) for a in args])
        return SimpleNamespace(returncode=code or 0, stdout=capsys.readouterr().out)
    return call


def test_truncation_classifies_every_designed_loop(forensics_dataset, probe):
    pid = point_id_of(forensics_dataset, "Loopy-3B", "tables", num_rows=80)
    data = json.loads(probe("truncation", forensics_dataset, "--point-id", pid, "--format", "json").stdout)
    samples = data["samples"]
    failures = SAMPLES - correct_count("Loopy-3B", "tables", 80)
    assert len(samples) == (failures + 1) // 2           # every truncated sample, once
    assert all(s["classification"] in LOOP_KINDS for s in samples)
    assert {s["classification"] for s in samples} == set(LOOP_KINDS)
    assert all(s["severe"] for s in samples)              # the loops fill the answers
    assert sum(data["distribution"].values()) == len(samples)


def test_truncation_markdown_has_table_and_distribution(forensics_dataset):
    pid = point_id_of(forensics_dataset, "Loopy-3B", "tables", num_rows=40)
    proc = run_script("probe.py", "truncation", forensics_dataset, "--point-id", pid)
    assert proc.returncode == 0, proc.stderr
    assert "| classification |" in proc.stdout
    assert "## Class distribution" in proc.stdout and "SEVERE" in proc.stdout


def test_truncation_of_a_point_without_truncation(forensics_dataset, probe):
    pid = point_id_of(forensics_dataset, "Steady-7B", "tables", num_rows=40)
    assert "No truncated samples" in probe("truncation", forensics_dataset, "--point-id", pid).stdout


def test_failure_lists_failed_samples_and_breaks_them_down(forensics_dataset, probe):
    pid = point_id_of(forensics_dataset, "Steady-7B", "tables", num_rows=40)
    data = json.loads(probe("failure", forensics_dataset, "--point-id", pid, "--format", "json").stdout)
    failures = SAMPLES - correct_count("Steady-7B", "tables", 40)
    assert data["samples"] == SAMPLES and len(data["failures"]) == failures
    first = data["failures"][0]
    assert first["outcome"] == "incorrect" and first["extracted"] == str(int(first["target"]) + 7)
    ops = {(r["field"], r["value"]): r for r in data["breakdown"]}
    # failures go to the "sum" samples (indices 0-7) first, by design of the fixture
    assert ops[("operation", "sum")]["failures"] == min(failures, 8)
    assert ops[("operation", "max")]["failures"] == max(0, failures - 8)
    assert ops[("operation", "sum")]["samples"] == 8


def test_failure_limit_full_and_several_points(forensics_dataset, probe):
    a = point_id_of(forensics_dataset, "Loopy-3B", "tables", num_rows=80)
    b = point_id_of(forensics_dataset, "Loopy-3B", "tables", num_rows=160)
    short = probe("failure", forensics_dataset, "--point-id", a, "--point-id", b, "--limit", "3").stdout
    assert short.count("### Sample") == 3 and "characters omitted" in short
    full = probe("failure", forensics_dataset, "--point-id", a, "--full").stdout
    assert "characters omitted" not in full
    # whole loops are printed: the designed static loop appears all 120 times
    assert full.count("Let me re-check the score column one more time") >= 120


def test_unknown_point_id_is_a_one_line_error(forensics_dataset, probe):
    with pytest.raises(UserError, match="point id 12345 is not in"):
        probe("failure", forensics_dataset, "--point-id", 12345)
    proc = run_script("probe.py", "truncation", forensics_dataset)
    assert proc.returncode == 2 and "--point-id" in proc.stderr


def test_fft_pngs_and_the_table_row_frequency(forensics_dataset, probe, tmp_path):
    probe("fft", forensics_dataset, "--output-dir", tmp_path, "--quiet")
    files = sorted(p.name for p in tmp_path.glob("fft_*.png"))
    assert files == ["fft_arithmetic.png", "fft_tables.png"]
    for name in files:
        with Image.open(tmp_path / name) as image:
            image.verify()
    data = json.loads(probe("fft", forensics_dataset, "--view", "rows", "--format", "json", "--quiet").stdout)
    spectra = data["spectra"]
    assert {s["value"] for s in spectra} == {10, 20, 40, 80, 160}
    big = next(s for s in spectra if s["value"] == 160)
    spectrum = np.array(big["spectrum"])
    # each CSV row is ROW_CHARS bytes: with the byte tokenizer the row period is ROW_CHARS tokens
    row_bin = int(np.argmin(np.abs(FREQUENCIES - 1 / ROW_CHARS)))
    assert spectrum[row_bin - 1:row_bin + 2].max() > 5 * np.median(spectrum[1:])


def test_fft_with_a_local_tokenizer_file(forensics_dataset, probe, tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {w: i for i, w in enumerate(["[UNK]", ",", "name", "city", "age", "score"])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    data = json.loads(probe("fft", forensics_dataset, "--view", "rows", "--tokenizer", path, "--format", "json",
                            "--quiet").stdout)
    assert len(data["spectra"]) == 10 and all(len(s["spectrum"]) == len(FREQUENCIES) for s in data["spectra"])
    with pytest.raises(UserError, match="cannot load tokenizer"):
        probe("fft", forensics_dataset, "--tokenizer", tmp_path / "missing-dir", "--quiet")


def test_fft_shows_its_points_bar_on_stderr_unless_quiet(forensics_dataset, capsys):
    """The command hands in the bar as before: shown (on stderr) whenever not --quiet."""
    args = ["fft", str(forensics_dataset), "--view", "rows", "--format", "json"]
    assert (probe_script.main(args) or 0) == 0
    shown = capsys.readouterr()
    points = sum(s["points"] for s in json.loads(shown.out)["spectra"])   # each point in one row of one view
    assert "fft points" in shown.err and f"{points}/{points}" in shown.err
    assert (probe_script.main([*args, "--quiet"]) or 0) == 0
    assert capsys.readouterr().err == ""
