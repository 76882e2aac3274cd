"""Hostile blobs and manifests: nothing outside data/ is touched, nothing but the entry is replaced.

Each archive here is built by hand with tarfile (not by resolver.share.blobs.pack), hashed
so that it passes the blob-name check, and then unpacked the way `data.py pull`
does it. The expectation is always the same: a one-line UnsafeArchive / UserError,
no file created or changed anywhere, not even the target.
"""
from __future__ import annotations

import hashlib
import http.server
import io
import json
import tarfile

import pytest
import zstandard

from resolver.core.errors import UserError
from resolver.share import blobs as blobs, manifest as manifestlib, sync as datasync, tarsafe as tarsafe
from resolver.share.remote_base import RemoteError, part_path
from resolver.share.remote_dir import DirectoryRemote
from resolver.share.remote_http import HttpRemote
from resolver.share.scopes import parse_scope
from tests.conftest import run_script
from tests.support.served import served


def tar_bytes(members) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, payload in members:
            tar.addfile(info, io.BytesIO(payload) if payload is not None else None)
    return buffer.getvalue()


def blob_of(folder, members, raw: bytes | None = None):
    """Write a .tar.zst whose name is its sha256 into `folder`; returns (path, name, tar bytes)."""
    data = raw if raw is not None else tar_bytes(members)
    packed = zstandard.ZstdCompressor().compress(data)
    name = hashlib.sha256(packed).hexdigest()
    path = folder / f"{name}.tar.zst"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_bytes(packed)
    return path, name, data


def d(name):
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = 0o755
    return info, None


def f(name, payload=b"owned\n"):
    info = tarfile.TarInfo(name)
    info.size = len(payload)
    return info, payload


def link(name, target, kind=tarfile.SYMTYPE):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


def snapshot(root):
    """Every path under root with its bytes (files) or None (dirs/links): compares 'nothing changed'."""
    out = {}
    for path in sorted(root.rglob("*")):
        out[path.relative_to(root).as_posix()] = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    return out


def special(name, kind):
    info = tarfile.TarInfo(name)
    info.type = kind
    return info, None


def cve_2025_4517_chain(root="run"):
    """The CVE-2025-4517 shape: 16 directories with 247-character names, each reached through a
    one-letter symlink, a link at the end of the chain back up 16 levels, and an 'escape'
    link that goes through it and then three levels further up, then a file under 'escape'.

    Read textually, every link stays inside `root`; resolved on disk, `escape` is three
    levels above it. The pre-2025 tarfile data filter missed it because the resolved
    path of the chain outgrows PATH_MAX, where os.path.realpath stops resolving.
    """
    members = [d(root)]
    physical, textual = root, []
    for i in range(16):
        letter = chr(ord("a") + i)
        long = letter * 247
        members.append(d(f"{physical}/{long}"))
        members.append(link(f"{physical}/{letter}", long))
        physical = f"{physical}/{long}"
        textual.append(letter)
    top = "/".join(textual) + "/" + "l" * 254
    members.append(link(f"{root}/{top}", "../" * 16))
    members.append(link(f"{root}/escape", top + "/../../.."))
    members.append(f(f"{root}/escape/outside.txt", b"overwritten\n"))
    return members


HOSTILE = {
    "cve-2025-4517-chain": cve_2025_4517_chain(),
    "symlink-dir-then-file": [d("run"), link("run/ln", "../.."), f("run/ln/escaped.txt")],
    "symlink-inside-target": [d("run"), f("run/a.txt"), link("run/b", "a.txt")],
    "hardlink-to-earlier-member": [d("run"), f("run/a.txt"), link("run/b", "run/a.txt", tarfile.LNKTYPE)],
    "hardlink-outside": [d("run"), link("run/hl", "../outside.txt", tarfile.LNKTYPE)],
    "file-under-a-file": [d("run"), f("run/x"), f("run/x/y")],
    "parent-never-listed": [d("run"), f("run/sub/y")],
    "duplicate-name": [d("run"), f("run/x", b"one"), f("run/x", b"two")],
    "dir-after-file-same-name": [d("run"), f("run/x"), d("run/x")],
    "dotdot": [d("run"), f("run/../outside.txt")],
    "dot-part": [d("run"), f("run/./x")],
    "absolute": [d("run"), f("/tmp/reasonscape-absolute-escape.txt")],
    "backslash": [d("run"), f("run\\..\\..\\outside.txt")],
    "other-top-level": [d("run"), f("elsewhere/x")],
    "root-is-a-link": [link("run", "..")],
    "device": [d("run"), special("run/dev", tarfile.CHRTYPE)],
    "fifo": [d("run"), special("run/fifo", tarfile.FIFOTYPE)],
    "too-deep": [d("run")] + [d("run/" + "/".join(["d"] * n)) for n in range(1, tarsafe.MAX_DEPTH + 1)],
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_member_is_refused_and_nothing_is_written(tmp_path, case):
    blob_file, name, _ = blob_of(tmp_path / "blobs", HOSTILE[case])
    area = tmp_path / "area"
    (area / "data").mkdir(parents=True)
    (area / "outside.txt").write_text("keep me\n")
    before = snapshot(area)
    with pytest.raises(tarsafe.UnsafeArchive) as err:
        blobs.unpack(blob_file, name, area / "data" / "run")
    assert "\n" not in str(err.value)
    assert snapshot(area) == before                  # not even the target or a temp dir
    assert (area / "outside.txt").read_text() == "keep me\n"
    assert not (tmp_path / "outside.txt").exists()


def test_the_cve_chain_is_refused_at_its_first_link_before_anything_is_created(tmp_path):
    blob_file, name, _ = blob_of(tmp_path / "blobs", cve_2025_4517_chain())
    with pytest.raises(tarsafe.UnsafeArchive, match=r"'run/a' is a link"):
        blobs.unpack(blob_file, name, tmp_path / "out" / "run")
    assert [p.name for p in (tmp_path / "out").iterdir()] == []


def test_a_plain_tree_still_unpacks(tmp_path):
    blob_file, name, _ = blob_of(tmp_path / "blobs", [d("run"), d("run/sub"), f("run/a.txt", b"A"),
                                                      f("run/sub/b.txt", b"BB")])
    # The hand-made tar is not pack's deterministic stream, so its content hash differs from
    # pack's: compare against an independent pack of the same files instead.
    src = tmp_path / "src" / "run"
    (src / "sub").mkdir(parents=True)
    (src / "a.txt").write_bytes(b"A")
    (src / "sub" / "b.txt").write_bytes(b"BB")
    packed = blobs.pack(src, tmp_path / "cache")
    expect = blobs.Expected(packed.content, 3, 2)
    written = blobs.unpack(blob_file, name, tmp_path / "out" / "run", expect=expect)
    assert written == 3
    assert (tmp_path / "out" / "run" / "sub" / "b.txt").read_bytes() == b"BB"


# ---------------------------------------------------------------- sizes: bombs and lies

def test_files_bigger_than_the_manifest_says_are_refused_before_writing(tmp_path):
    big = b"\0" * (8 << 20)                            # 8 MiB of zeros: a few KiB compressed
    blob_file, name, _ = blob_of(tmp_path / "blobs", [d("run"), f("run/bomb", big)])
    assert blob_file.stat().st_size < 64 << 10
    with pytest.raises(tarsafe.UnsafeArchive, match="10 bytes"):
        blobs.unpack(blob_file, name, tmp_path / "out" / "run", expect=blobs.Expected("0" * 64, 10, 1))
    assert list((tmp_path / "out").iterdir()) == []


def test_more_files_than_the_manifest_says_are_refused(tmp_path):
    blob_file, name, _ = blob_of(tmp_path / "blobs", [d("run"), f("run/a", b"1"), f("run/b", b"2")])
    with pytest.raises(tarsafe.UnsafeArchive, match="1 file"):
        blobs.unpack(blob_file, name, tmp_path / "out" / "run", expect=blobs.Expected("0" * 64, 100, 1))


def test_a_huge_pax_header_stops_at_the_stream_cap(tmp_path):
    # tarfile reads a PAX header into memory whole; the capped reader stops it at the cap.
    info, _ = d("run")
    info.pax_headers = {"comment": "x" * (tarsafe.HEADER_MARGIN_FIXED + (1 << 20))}
    blob_file, name, _ = blob_of(tmp_path / "blobs", [(info, None)])
    with pytest.raises(tarsafe.UnsafeArchive, match="unpacks to more than"):
        blobs.unpack(blob_file, name, tmp_path / "out" / "run", expect=blobs.Expected("0" * 64, 0, 0))


def test_unpacked_content_must_match_the_manifest(tmp_path):
    src = tmp_path / "src" / "run"
    src.mkdir(parents=True)
    (src / "a.txt").write_text("real")
    packed = blobs.pack(src, tmp_path / "cache")
    blob_file = blobs.blob_path(tmp_path / "cache", packed.blob)
    wrong = blobs.Expected("ab" * 32, packed.bytes, packed.files)
    dest = tmp_path / "out" / "run"
    dest.mkdir(parents=True)
    (dest / "mine.txt").write_text("local")
    with pytest.raises(tarsafe.UnsafeArchive, match="not the manifest's"):
        blobs.unpack(blob_file, packed.blob, dest, replace=True, expect=wrong)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["run"]
    assert (dest / "mine.txt").read_text() == "local"           # the old copy is untouched


# ---------------------------------------------------------------- oversize downloads

def test_directory_remote_refuses_a_blob_bigger_than_recorded(tmp_path):
    blob_file, name, _ = blob_of(tmp_path / "remote" / "xx", [d("run"), f("run/a", b"z" * 5000)])
    remote_root = tmp_path / "remote"
    (remote_root / name[:2]).mkdir(exist_ok=True)
    blob_file.rename(blobs.blob_path(remote_root, name))
    final = tmp_path / "cache" / "x.tar.zst"
    with pytest.raises(RemoteError, match="more than the 10"):
        DirectoryRemote(remote_root, str(remote_root)).fetch(name, final, limit=10)
    assert not final.exists() and not part_path(final).exists()


class _Streamer(http.server.BaseHTTPRequestHandler):
    """Streams far more than any manifest records, without Content-Length (or with a lying one)."""

    sent = 0

    def do_GET(self):
        self.send_response(200)
        if self.server.announce:
            self.send_header("Content-Length", str(64 << 20))
        self.end_headers()
        try:
            for _ in range(64):                      # up to 64 MiB if nobody stops reading
                self.wfile.write(b"\0" * (1 << 20))
                type(self).sent += 1 << 20
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("announce,fragment", [(False, "sent more than the 1000 bytes"),
                                               (True, "more than the 1000 the manifest records")])
def test_http_remote_stops_reading_past_the_recorded_size(tmp_path, announce, fragment):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Streamer)
    server.announce = announce
    with served(server):
        final = tmp_path / "cache" / "x.tar.zst"
        with pytest.raises(RemoteError, match=fragment):
            HttpRemote(f"http://127.0.0.1:{server.server_address[1]}", retries=1, backoff=0).fetch(
                "ab" * 32, final, limit=1000)
        assert not part_path(final).exists() and not final.exists()


# ---------------------------------------------------------------- manifests that name the wrong thing

def entry(blob="a" * 64, content="b" * 64, cohort="set/M", **more):
    return {"blob": blob, "content": content, "size": 10, "bytes": 10, "files": 1, "cohort": cohort,
            "eval_ids": [], **more}


@pytest.mark.parametrize("key,cohort,fragment", [
    (".", "set", "must be a relative path"),
    ("set", "set", "<cohort>/<run folder>"),
    ("set/M", "set/M", "<cohort>/<run folder>"),
    ("set/M/..", "set/M", "must be a relative path"),
    ("set/M/.blobs", "set/M", "must be a relative path"),
    ("set/M//run", "set/M", "must be a relative path"),
    ("set/M/run", "other/M", "<cohort>/<run folder>"),
    ("set/M/run\x00x", "set/M", "must be a relative path"),
])
def test_bad_runs_keys_are_refused_on_load(tmp_path, key, cohort, fragment):
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"format": 1, "runs": {key: entry(cohort=cohort)}, "dbs": {}}))
    with pytest.raises(UserError, match=fragment):
        manifestlib.load_manifest(path)


def test_manifest_unknown_field_names_the_closest(tmp_path):
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"format": 1, "runs": {"set/M/run": {**entry(), "evalids": []}}}))
    with pytest.raises(UserError, match="did you mean eval_ids"):
        manifestlib.load_manifest(path)


def make_data(tmp_path, runs: dict, blob_members):
    """data/ with cohort set/M (evals.json, one run folder, a DB) and a directory remote holding the blob."""
    data = tmp_path / "data"
    cohort = data / "set" / "M"
    (cohort / "run1").mkdir(parents=True)
    (cohort / "evals.json").write_text("[]")
    (cohort / "run1" / "step.ndjson").write_text('{"x": 1}\n')
    (data / "keep.db").write_bytes(b"db")
    remote = data / ".remote"
    blob_file, name, _ = blob_of(tmp_path / "made", blob_members)
    target = blobs.blob_path(remote, name)
    target.parent.mkdir(parents=True)
    blob_file.rename(target)
    size = target.stat().st_size
    manifest = {"format": 1, "runs": {k: entry(blob=name, cohort=c, **{"size": size}) for k, c in runs.items()},
                "dbs": {}}
    (data / "manifest.json").write_text(json.dumps(manifest))
    return data, name


def test_a_runs_key_naming_a_cohort_never_deletes_it(tmp_path):
    # key set/M with cohort "set" has the right *shape*; the guard sees M is a cohort, not a run folder.
    data, _ = make_data(tmp_path, {"set/M": "set"}, [d("M"), f("M/x.txt")])
    (data / "set" / "evals.json").write_text("[]")
    before = snapshot(tmp_path)
    manifest = manifestlib.load_manifest(data / "manifest.json")
    scope = parse_scope("cohort", str(data / "set"), manifest)
    remote = DirectoryRemote(data / ".remote", ".remote")
    outcomes = datasync.pull(scope, manifest, remote, force=True)
    assert [o.action for o in outcomes] == ["failed"]
    assert "not a run folder" in outcomes[0].detail
    after = snapshot(tmp_path)
    after = {k: v for k, v in after.items() if not k.startswith("data/.blobs")}   # the downloaded blob
    assert after == before


def test_pull_force_of_dot_key_exits_2_and_leaves_data_alone(tmp_path):
    data, _ = make_data(tmp_path, {}, [d("run"), f("run/x.txt")])
    raw = json.loads((data / "manifest.json").read_text())
    raw["runs"] = {".": entry(cohort="set/M")}
    (data / "manifest.json").write_text(json.dumps(raw))
    before = snapshot(tmp_path)
    proc = run_script("data.py", "pull", "cohort", data / "set" / "M", "--force", "--manifest",
                      data / "manifest.json", "--quiet", cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert snapshot(tmp_path) == before


def test_pull_of_the_cve_chain_through_the_real_cli_touches_nothing_outside(tmp_path):
    data, _ = make_data(tmp_path, {"set/M/run2": "set/M"}, cve_2025_4517_chain("run2"))
    victim = tmp_path / "outside.txt"
    victim.write_text("keep me\n")
    before = snapshot(tmp_path)
    proc = run_script("data.py", "pull", "cohort", data / "set" / "M", "--manifest", data / "manifest.json",
                      "--quiet", cwd=tmp_path, timeout=120)
    assert proc.returncode == 1, proc.stderr             # the item failed; the command reports it
    assert "is a link" in proc.stdout and "Traceback" not in proc.stderr
    after = {k: v for k, v in snapshot(tmp_path).items() if not k.startswith("data/.blobs")}
    assert after == before
    assert victim.read_text() == "keep me\n"


def test_a_bomb_pulled_through_the_real_cli_fails_and_leaves_nothing(tmp_path):
    # The manifest says 10 bytes in 1 file; the blob (a few KiB) holds 8 MiB of zeros.
    data, _ = make_data(tmp_path, {"set/M/run3": "set/M"}, [d("run3"), f("run3/bomb", b"\0" * (8 << 20))])
    before = snapshot(tmp_path)
    proc = run_script("data.py", "pull", "cohort", data / "set" / "M", "--manifest", data / "manifest.json",
                      "--quiet", cwd=tmp_path, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "1 failed" in proc.stdout and "10 bytes" in proc.stdout
    after = {k: v for k, v in snapshot(tmp_path).items() if not k.startswith("data/.blobs")}
    assert after == before and not (data / "set" / "M" / "run3").exists()
