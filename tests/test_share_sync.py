"""data.py end to end on a directory remote: push, prune, pull, status, and failure paths."""
from __future__ import annotations

import json
import shutil

import pytest
from conftest import run_script

from resolver.share import blobs as blobs, manifest as manifestlib, scopes as scopes, sync as datasync
from resolver.share.remotes import open_remote
from tests.support.cohort_factory import build_data_dir, eval_entry, eval_id, tree_bytes, write_evals, write_run
from tests.support.progress import RecordingProgress


@pytest.fixture
def world(tmp_path):
    paths = build_data_dir(tmp_path, models=("alpha", "beta", "gamma"))
    (paths["data"] / "pointsdb-demo.db").write_bytes(b"DUCK" * 5000)
    paths["root"] = tmp_path
    paths["remote"] = tmp_path / "remote"
    return paths


def data_py(world, *args, expect=0):
    proc = run_script("data.py", *args, "--remote", str(world["remote"]), cwd=world["root"])
    assert proc.returncode == expect, proc.stdout + proc.stderr
    return proc


def raw_folders(data):
    return sorted(p for p in data.glob("demo/*/20*") if p.is_dir())


def test_round_trip_push_prune_pull_restores_every_byte(world):
    data = world["data"]
    before = tree_bytes(data)
    out = data_py(world, "push", "dataset", "data/demo.json", "--full").stdout
    assert out.count("published") >= 4
    manifest = json.loads((data / "manifest.json").read_text())
    assert set(manifest["dbs"]) == {"pointsdb-demo.db"}
    assert {e["cohort"] for e in manifest["runs"].values()} == {"demo/alpha", "demo/beta", "demo/gamma"}
    alpha = next(e for k, e in manifest["runs"].items() if k.startswith("demo/alpha/"))
    assert alpha["eval_ids"] == [eval_id("alpha", "zeroshot-nosys", "greedy-max")]
    # Manifest file is written with sorted keys (reviewable diffs).
    text = (data / "manifest.json").read_text()
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    for folder in raw_folders(data):
        shutil.rmtree(folder)
    (data / "pointsdb-demo.db").unlink()
    shutil.rmtree(data / ".blobs")
    data_py(world, "prune")
    data_py(world, "pull", "dataset", "data/demo.json")
    assert (data / "pointsdb-demo.db").read_bytes() == before["pointsdb-demo.db"]
    assert raw_folders(data) == []               # dataset scope = DB only without --full
    data_py(world, "pull", "dataset", "data/demo.json", "--full")
    after = {k: v for k, v in tree_bytes(data).items() if not k.startswith(".") and k != "manifest.json"}
    assert after == before
    second = data_py(world, "pull", "dataset", "data/demo.json", "--full").stdout
    assert "4 present" in second                  # nothing fetched again


def test_push_twice_is_unchanged_and_pull_by_eval_and_cohort(world):
    data = world["data"]
    data_py(world, "push", "cohort", "data/demo/alpha")
    assert "1 unchanged" in data_py(world, "push", "cohort", "data/demo/alpha").stdout
    data_py(world, "push", "cohort", "data/demo/beta")
    originals = {p.name: tree_bytes(p) for p in raw_folders(data)}
    for folder in raw_folders(data):
        shutil.rmtree(folder)
    beta_id = eval_id("beta", "zeroshot-nosys", "greedy-max")
    data_py(world, "pull", "eval", f"data/demo/alpha/{beta_id}", expect=2)      # not in that cohort
    data_py(world, "pull", "eval", f"data/demo/beta/{beta_id}")
    assert [p.parent.name for p in raw_folders(data)] == ["beta"]
    data_py(world, "pull", "cohort", "data/demo/alpha")
    pulled = {p.name: tree_bytes(p) for p in raw_folders(data)}
    assert pulled == {k: v for k, v in originals.items() if "gamma" not in k}


def test_status_reports_every_state(world):
    data = world["data"]
    data_py(world, "push", "cohort", "data/demo/alpha")
    data_py(world, "push", "cohort", "data/demo/beta")
    data_py(world, "push", "dataset", "data/demo.json")
    # alpha: modified locally
    next(raw_folders(data)[0].glob("*.ndjson")).open("a").write('{"extra": 1}\n')
    # beta: removed locally, still on the remote -> remote-only
    beta = [p for p in raw_folders(data) if p.parent.name == "beta"][0]
    shutil.rmtree(beta)
    # the DB: removed locally and its blob gone everywhere -> missing
    (data / "pointsdb-demo.db").unlink()
    manifest = manifestlib.load_manifest(data / "manifest.json")
    db_blob = manifest.dbs["pointsdb-demo.db"].blob
    blobs.blob_path(data / ".blobs", db_blob).unlink()
    blobs.blob_path(world["remote"], db_blob).unlink()
    # gamma: never pushed -> local-only
    rows = {r.key.split("/")[1] if r.kind == "runs" else r.key: r for r in datasync.status(
        scopes.parse_scope(None, None, manifest), manifest, open_remote(str(world["remote"]), data))}
    assert rows["alpha"].state == "modified" and rows["alpha"].remote == "yes"
    assert rows["beta"].state == "remote-only" and rows["beta"].remote == "yes"
    assert rows["gamma"].state == "local-only" and rows["gamma"].remote == "-"
    assert rows["pointsdb-demo.db"].state == "missing" and rows["pointsdb-demo.db"].remote == "no"
    # and "present" once the beta folder is pulled back
    data_py(world, "pull", "cohort", "data/demo/beta")
    out = data_py(world, "status", "cohort", "data/demo/beta").stdout
    assert "| present | yes | yes |" in out
    full = data_py(world, "status").stdout
    for state in ("modified", "present", "local-only", "missing"):
        assert f"| {state} |" in full


def test_prune_removes_only_unreferenced_blobs(world):
    data = world["data"]
    data_py(world, "push", "cohort", "data/demo/alpha")
    folder = [p for p in raw_folders(data) if p.parent.name == "alpha"][0]
    old = manifestlib.load_manifest(data / "manifest.json").runs
    old_blob = next(iter(old.values())).blob
    (folder / "000_arithmetic_length-4.ndjson").open("a").write('{"more": 1}\n')
    data_py(world, "push", "cohort", "data/demo/alpha")      # new blob replaces the old in the manifest
    new_blob = next(iter(manifestlib.load_manifest(data / "manifest.json").runs.values())).blob
    assert new_blob != old_blob
    stale_part = data / ".blobs" / "ab" / ("ab" * 32 + ".tar.zst.part")
    stale_part.parent.mkdir(parents=True, exist_ok=True)
    stale_part.write_bytes(b"x")
    assert "would remove 2" in data_py(world, "prune", "--dry-run").stdout
    assert blobs.blob_path(data / ".blobs", old_blob).exists()
    assert "removed 2" in data_py(world, "prune").stdout
    assert not blobs.blob_path(data / ".blobs", old_blob).exists()
    assert blobs.blob_path(data / ".blobs", new_blob).exists()
    assert not stale_part.exists()


def test_tampered_remote_blob_is_refused_and_nothing_unpacked(world):
    data = world["data"]
    data_py(world, "push", "cohort", "data/demo/alpha")
    blob = next(iter(manifestlib.load_manifest(data / "manifest.json").runs.values())).blob
    remote_copy = blobs.blob_path(world["remote"], blob)
    raw = bytearray(remote_copy.read_bytes())
    raw[-5] ^= 0x01
    remote_copy.write_bytes(bytes(raw))
    shutil.rmtree(data / ".blobs")
    folder = [p for p in raw_folders(data) if p.parent.name == "alpha"][0]
    shutil.rmtree(folder)
    proc = data_py(world, "pull", "cohort", "data/demo/alpha", expect=1)
    assert "corrupt" in proc.stdout and blob in proc.stdout
    assert not folder.exists()
    assert not blobs.blob_path(data / ".blobs", blob).exists()     # bad copy removed
    assert not any(p.name.startswith(".") for p in folder.parent.iterdir() if p.is_dir())


def test_corrupted_cache_blob_is_replaced_from_the_remote(world):
    data = world["data"]
    data_py(world, "push", "cohort", "data/demo/alpha")
    blob = next(iter(manifestlib.load_manifest(data / "manifest.json").runs.values())).blob
    cached = blobs.blob_path(data / ".blobs", blob)
    cached.write_bytes(b"rotten" + cached.read_bytes()[6:])
    folder = [p for p in raw_folders(data) if p.parent.name == "alpha"][0]
    original = tree_bytes(folder)
    shutil.rmtree(folder)
    data_py(world, "pull", "cohort", "data/demo/alpha")
    assert tree_bytes(folder) == original


def test_hostile_blob_on_the_remote_cannot_write_outside_data(world, tmp_path):
    from test_share_blobs import HOSTILE, hostile_blob

    data = world["data"]
    data_py(world, "push", "cohort", "data/demo/alpha")
    folder = [p for p in raw_folders(data) if p.parent.name == "alpha"][0]
    blob_file, name = hostile_blob(tmp_path, [(m[0].replace(name=m[0].name.replace("run", folder.name, 1)), m[1])
                                              for m in HOSTILE["symlink-then-write"]])
    target = blobs.blob_path(world["remote"], name)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(blob_file, target)
    with manifestlib.update_manifest(data / "manifest.json") as manifest:
        entry = manifest.runs[f"demo/alpha/{folder.name}"]
        entry.blob = name
    shutil.rmtree(folder)
    shutil.rmtree(data / ".blobs")
    outside_before = sorted(p.name for p in world["root"].iterdir())
    proc = data_py(world, "pull", "cohort", "data/demo/alpha", expect=1)
    assert "refused" in proc.stdout
    assert sorted(p.name for p in world["root"].iterdir()) == outside_before
    assert not (data / "demo" / "escaped.txt").exists() and not folder.exists()


def test_bad_input_is_one_line_and_exit_2(world):
    cases = [
        ("pull", "eval", "not-an-id"),
        ("pull", "cohort", "/etc"),
        ("pull", "dataset", "data/missing.json"),
        ("push", "dataset", "data/demo.json", "--remote", "ftp://host/x"),
        ("pull", "cohort"),
    ]
    for args in cases:
        proc = run_script("data.py", *args, cwd=world["root"])
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    (world["data"] / "manifest.json").write_text("{not json")
    proc = run_script("data.py", "status", cwd=world["root"])
    assert proc.returncode == 2 and "manifest.json is not valid JSON" in proc.stderr


def test_pull_of_unpublished_scope_says_so(world):
    proc = run_script("data.py", "pull", "cohort", "data/demo/alpha", "--remote", str(world["remote"]),
                      cwd=world["root"])
    assert proc.returncode == 2 and "has nothing for cohort demo/alpha" in proc.stderr


def test_push_dataset_without_db_names_the_evaluate_command(world):
    (world["data"] / "pointsdb-demo.db").unlink()
    proc = run_script("data.py", "push", "dataset", "data/demo.json", cwd=world["root"])
    assert proc.returncode == 2 and "evaluate.py --dataset" in proc.stderr


def test_remote_precedence_flag_env_manifest(world, monkeypatch):
    data = world["data"]
    env_remote = world["root"] / "env-remote"
    proc = run_script("data.py", "remote", cwd=world["root"])
    assert proc.stdout.strip() == ".remote"
    run_script("data.py", "remote", "s3://bucket/prefix", cwd=world["root"], check=True)
    assert json.loads((data / "manifest.json").read_text())["remote"] == "s3://bucket/prefix"
    # data.py reads $REASONSCAPE_REMOTE when it picks the remote, not at import: set here, the
    # in-process command sees it as its own process would (tests/support/in_process.py)
    monkeypatch.setenv("REASONSCAPE_REMOTE", str(env_remote))
    proc = run_script("data.py", "remote", cwd=world["root"])
    assert proc.stdout.strip() == str(env_remote)
    proc = run_script("data.py", "remote", "--remote", "/x", cwd=world["root"])
    assert proc.stdout.strip() == "/x"
    # The environment remote is really used for a push.
    run_script("data.py", "push", "cohort", "data/demo/alpha", cwd=world["root"], check=True)
    assert len(list(env_remote.glob("??/*.tar.zst"))) == 1


def test_eval_scope_only_takes_matching_folders(world):
    data = world["data"]
    cohort = data / "demo" / "alpha"
    write_evals(cohort, [eval_entry("demo/alpha", "alpha"), eval_entry("demo/alpha", "alpha", sampler="greedy-4k")])
    write_run(cohort, "alpha", sampler="greedy-4k", seed=99)
    other = eval_id("alpha", "zeroshot-nosys", "greedy-4k")
    out = data_py(world, "push", "eval", other).stdout
    assert "greedy-4k" in out and "1 published" in out
    manifest = json.loads((data / "manifest.json").read_text())
    assert [e["eval_ids"] for e in manifest["runs"].values()] == [[other]]


def test_status_reuses_content_hashes_until_a_file_changes(world, monkeypatch):
    data = world["data"]
    data_py(world, "push", "cohort", "data/demo/alpha")
    manifest = manifestlib.load_manifest(data / "manifest.json")
    remote = open_remote(str(world["remote"]), data)
    scope = scopes.parse_scope("cohort", str(data / "demo" / "alpha"), manifest)
    calls = []
    real = blobs.content_hash
    monkeypatch.setattr(blobs, "content_hash", lambda path, progress=None: calls.append(path) or real(path, progress))
    assert [r.state for r in datasync.status(scope, manifest, remote, check_remote=False)] == ["present"]
    assert calls == []                     # push remembered the hash of what it packed
    target = next(raw_folders(data)[0].glob("*.ndjson"))
    text = target.read_text()
    target.write_text(text.replace("step1", "stepX", 1))          # same size, new mtime
    assert [r.state for r in datasync.status(scope, manifest, remote, check_remote=False)] == ["modified"]
    assert len(calls) == 1
    assert [r.state for r in datasync.status(scope, manifest, remote, check_remote=False)] == ["modified"]
    assert len(calls) == 1                 # the new signature's hash was remembered


def test_status_without_scope_lists_local_databases_of_dataset_files(world):
    out = data_py(world, "status", "--no-remote").stdout
    assert "| pointsdb-demo.db | dbs | demo.json | local-only |" in out
    (world["data"] / "broken.json").write_text('{"cohorts": [1, 2]}')      # ignored, not fatal
    assert "| pointsdb-demo.db | dbs | demo.json | local-only |" in data_py(world, "status", "--no-remote").stdout


def test_push_and_pull_count_on_the_bars_handed_in_and_show_nothing_without(world, capfd):
    data = world["data"]
    manifest = manifestlib.load_manifest(data / "manifest.json")
    remote = open_remote(str(world["remote"]), data)
    scope = scopes.parse_scope("cohort", str(data / "demo" / "alpha"), manifest)
    (folder,) = [p for p in raw_folders(data) if p.parent.name == "alpha"]
    folder_bytes = sum(len(b) for b in tree_bytes(folder).values())
    name = folder.name[:40]                          # bar labels keep a name's first 40 characters
    pushed = RecordingProgress()
    assert [o.action for o in datasync.push(scope, manifest, remote, pushed)] == ["published"]
    blob = manifestlib.load_manifest(data / "manifest.json").runs[f"demo/alpha/{folder.name}"].blob
    blob_size = blobs.blob_path(data / ".blobs", blob).stat().st_size
    short = blobs.short(blob)
    # one item bar; the pack counts the folder's file bytes, the upload the blob's
    assert pushed.descs() == ["push", f"pack {name}", f"upload {short}"]
    items, pack, upload = pushed.bars
    assert (items.kwargs["unit"], items.counted) == ("item", 1)
    assert (pack.kwargs["total"], pack.counted, pack.kwargs["unit"]) == (folder_bytes, folder_bytes, "B")
    assert (upload.kwargs["total"], upload.counted) == (blob_size, blob_size)
    assert all(bar.kwargs["leave"] is False and bar.closed for bar in pushed.bars)

    shutil.rmtree(folder)
    shutil.rmtree(data / ".blobs")
    manifest = manifestlib.load_manifest(data / "manifest.json")
    pulled = RecordingProgress()
    assert [o.action for o in datasync.pull(scope, manifest, remote, progress=pulled)] == ["pulled"]
    # fetched, its hash checked after the download and again before unpacking, unpacked,
    # and the unpacked tree's content hash checked against the manifest's
    assert pulled.descs() == ["pull", f"download {short}", f"verify {short}", f"verify {short}",
                              f"unpack {name}", f"hash {name}"]
    download = pulled.bars[1]
    assert (download.kwargs["total"], download.counted) == (blob_size, blob_size)
    assert pulled.bars[5].counted == folder_bytes

    capfd.readouterr()
    shutil.rmtree(folder)
    shutil.rmtree(data / ".blobs")
    assert [o.action for o in datasync.pull(scope, manifest, remote)] == ["pulled"]
    assert capfd.readouterr() == ("", "")          # no factory: no bar, nothing written
