"""Every run folder's metadata.json (api mode, read-batch, --offline), its reader (cohort.py info),
and folders without one (written before it existed) still evaluating."""
from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import jsonschema
import pytest
import yaml
from conftest import run_script

from resolver.run.folder_metadata import redacted_command
from tests.support.runner import TINY, run_folders, runner_args, simulated_cohort, simulator

REPO = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((REPO / "docs" / "schemas" / "run-metadata.json").read_text())
# the generator versions of tiny.yaml's tasks, as docs/tasks.md's version table gives them
TINY_TASKS = {"arithmetic", "boolean", "brackets"}


def metadata_of(folder: Path) -> dict:
    data = json.loads((folder / "metadata.json").read_text())
    jsonschema.validate(data, SCHEMA, cls=jsonschema.Draft202012Validator)
    return data


def check_common(meta: dict, mode: str, model: str, sampler: str) -> None:
    level = yaml.safe_load(TINY.read_text())["precision"]
    first = next(iter(level))                    # the config's first level is the default
    assert meta["mode"] == mode and meta["config"] == "tiny" and meta["model"] == model
    assert meta["template"] == "zerocot-nosys" and meta["sampler"] == sampler
    assert meta["seed"] == 42 and meta["density"] == "normal"
    assert meta["precision"] == {"name": first, "count": level[first]["count"],
                                 "maxrounds": level[first]["maxrounds"],
                                 "target_margin": level[first]["target_margin"]}
    assert set(meta["versions"]["tasks"]) == TINY_TASKS
    started, ended = (datetime.fromisoformat(meta[k]) for k in ("started", "ended"))
    assert started <= ended and started.utcoffset().total_seconds() == 0


def test_offline_folder_has_metadata_without_the_key(tmp_path):
    proc = run_script("runner.py", "--config", TINY, "--template", REPO / "templates/zerocot-nosys.json",
                      "--sampler", REPO / "samplers/greedy-4k.json", "--model", "m", "--offline", "1",
                      "--output", tmp_path, "--apikey", "sk-SECRET", "--quiet", check=True)
    (folder,) = run_folders(tmp_path)
    meta = metadata_of(folder)
    check_common(meta, "offline", "m", "greedy-4k")
    assert meta["offline_rounds"] == 1
    # every record's task_version is what metadata says for its task
    for path in folder.glob("*.ndjson"):
        record = json.loads(path.read_text().splitlines()[0])
        assert meta["versions"]["tasks"][record["base_task"]] == record.get("task_version", 1)
    assert "sk-SECRET" not in json.dumps(meta) and "sk-SECRET" not in proc.stdout
    assert meta["command"][meta["command"].index("--apikey") + 1] == "***"


def test_redacted_command_hides_both_forms():
    assert redacted_command(["runner.py", "--apikey", "k1", "--model", "m", "--apikey=k2"]) == \
        ["runner.py", "--apikey", "***", "--model", "m", "--apikey=***"]


def test_api_and_read_batch_folders_have_metadata(tmp_path):
    from test_run_batch import batch_args, play_vllm

    with simulator(TINY) as sim:
        run_script("runner.py", *runner_args(sim.url, tmp_path / "api"), check=True)
        (api_folder,) = run_folders(tmp_path / "api" / "results")
        meta = metadata_of(api_folder)
        check_common(meta, "api", "sim-mid", "greedy-2k")
        assert meta["command"][0] == "runner.py" and sim.url in meta["command"]

        base = batch_args(tmp_path)
        run_script("runner.py", *base, "--mode", "write-batch", check=True)
        batch = sorted((tmp_path / "results").glob("*-offline.ndjson"))[-1]
        play_vllm(batch, sim.url, tmp_path / "out.ndjson")
        run_script("runner.py", *base, "--mode", "read-batch", "--batch", tmp_path / "out.ndjson", check=True)
    (read_folder,) = run_folders(tmp_path / "results")
    check_common(metadata_of(read_folder), "read-batch", "sim-mid", "greedy-2k")


@pytest.mark.slow
def test_folders_with_and_without_metadata_evaluate_alike(tmp_path):
    from test_evaluate_pipeline import all_ndjson, check_against_raw

    cohort = simulated_cohort(tmp_path)
    (folder,) = run_folders(cohort)
    assert (folder / "metadata.json").is_file()
    (cohort / "evals.json").write_text(json.dumps([{
        "evaluate": {"glob": "data/demo/sim-mid/*_sim-mid_*/*"},
        "filters": {"model": "sim-mid", "template": "zerocot-nosys", "sampler": "greedy-2k"}}]))
    dataset = tmp_path / "data" / "demo.json"
    dataset.write_text(json.dumps({"db": "pointsdb-demo.db", "config": "../configs/tiny.yaml",
                                   "cohorts": ["demo/sim-mid/evals.json"]}))
    info = run_script("cohort.py", "info", cohort, cwd=tmp_path, check=True).stdout
    assert "| api " in info and "| normal " in info          # the listing reads metadata.json
    run_script("evaluate.py", "--dataset", dataset, cwd=tmp_path, check=True)
    check_against_raw(tmp_path / "data" / "pointsdb-demo.db", all_ndjson(cohort))

    (folder / "metadata.json").unlink()                         # a folder from before metadata.json
    shutil.rmtree(tmp_path / "data" / "pointsdb-demo.db", ignore_errors=True)
    (tmp_path / "data" / "pointsdb-demo.db").unlink(missing_ok=True)
    run_script("evaluate.py", "--dataset", dataset, cwd=tmp_path, check=True)
    check_against_raw(tmp_path / "data" / "pointsdb-demo.db", all_ndjson(cohort))
    info = run_script("cohort.py", "info", cohort, cwd=tmp_path, check=True).stdout
    assert "| api " not in info and folder.name in info

    (folder / "metadata.json").write_text("{not json")
    info = run_script("cohort.py", "info", cohort, cwd=tmp_path, check=True).stdout
    assert "unreadable metadata.json" in info
