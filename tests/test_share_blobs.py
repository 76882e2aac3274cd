"""blobs.py: deterministic packing, hash checks, and refusing hostile archives."""
from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
import time

import pytest
import zstandard

from resolver.core.errors import UserError
from resolver.share import blobs as blobs


def make_tree(root):
    (root / "run" / "sub").mkdir(parents=True)
    (root / "run" / "empty").mkdir()
    (root / "run" / "b.ndjson").write_text('{"x": 1}\n' * 1000)
    (root / "run" / "a.ndjson").write_text('{"y": "ü"}\n')
    (root / "run" / "sub" / ("long-" + "n" * 150 + ".ndjson")).write_bytes(os.urandom(5000))
    return root / "run"


def test_same_content_packs_to_the_same_blob_twice_and_elsewhere(tmp_path):
    src = make_tree(tmp_path / "one")
    first = blobs.pack(src, tmp_path / "cache1")
    second = blobs.pack(src, tmp_path / "cache2")
    assert first == second
    # A copy made later, with other mtimes and modes, still packs to the same bytes.
    copy = tmp_path / "two" / "run"
    shutil.copytree(src, copy)
    os.utime(copy / "a.ndjson", (1, 1))
    os.chmod(copy / "b.ndjson", 0o600)
    time.sleep(0.01)
    assert blobs.pack(copy, tmp_path / "cache3") == first
    # The name is the sha256 of the compressed bytes, computed independently here.
    stored = blobs.blob_path(tmp_path / "cache1", first.blob).read_bytes()
    assert hashlib.sha256(stored).hexdigest() == first.blob
    assert first.size == len(stored)
    assert first.files == 3
    assert first.bytes == sum(p.stat().st_size for p in src.rglob("*") if p.is_file())


def test_different_content_gives_a_different_blob(tmp_path):
    src = make_tree(tmp_path)
    before = blobs.pack(src, tmp_path / "cache")
    (src / "a.ndjson").write_text('{"y": "v"}\n')
    after = blobs.pack(src, tmp_path / "cache")
    assert before.blob != after.blob and before.content != after.content


def test_blob_is_a_standard_tar_zst_with_fixed_metadata(tmp_path):
    src = make_tree(tmp_path)
    result = blobs.pack(src, tmp_path / "cache")
    raw = zstandard.ZstdDecompressor().stream_reader(open(blobs.blob_path(tmp_path / "cache", result.blob), "rb")).read()
    assert hashlib.sha256(raw).hexdigest() == result.content
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names) and names[0] == "run"
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, 0, "", "")}
    assert {m.mode for m in members if m.isfile()} == {0o644}
    assert {m.mode for m in members if m.isdir()} == {0o755}


def test_round_trip_unpacks_identical_files(tmp_path):
    src = make_tree(tmp_path / "in")
    result = blobs.pack(src, tmp_path / "cache")
    dest = tmp_path / "out" / "run"
    blobs.unpack(blobs.blob_path(tmp_path / "cache", result.blob), result.blob, dest)
    for path in src.rglob("*"):
        twin = dest / path.relative_to(src)
        assert twin.is_dir() if path.is_dir() else twin.read_bytes() == path.read_bytes()
    assert blobs.content_hash(dest) == result.content
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["run"]     # no temp dirs left


def test_a_single_file_packs_and_unpacks(tmp_path):
    db = tmp_path / "pointsdb-x.db"
    db.write_bytes(os.urandom(10000))
    result = blobs.pack(db, tmp_path / "cache")
    assert result.files == 1 and result.bytes == 10000
    out = tmp_path / "out" / "pointsdb-x.db"
    blobs.unpack(blobs.blob_path(tmp_path / "cache", result.blob), result.blob, out)
    assert out.read_bytes() == db.read_bytes()


def test_symlinks_are_refused_when_packing(tmp_path):
    src = make_tree(tmp_path)
    (src / "link").symlink_to(src / "a.ndjson")
    with pytest.raises(UserError, match="symlink"):
        blobs.pack(src, tmp_path / "cache")
    assert not any((tmp_path / "cache").rglob("*.tar.zst"))


def test_tampered_blob_is_refused_and_removed(tmp_path):
    src = make_tree(tmp_path / "in")
    result = blobs.pack(src, tmp_path / "cache")
    path = blobs.blob_path(tmp_path / "cache", result.blob)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    dest = tmp_path / "out" / "run"
    with pytest.raises(blobs.CorruptBlob, match=result.blob):
        blobs.unpack(path, result.blob, dest)
    assert not path.exists()
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


# ---------------------------------------------------------------- hostile archives

def hostile_blob(tmp_path, members):
    """A well-formed .tar.zst (hash matches its name) holding the given members."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, payload in members:
            tar.addfile(info, io.BytesIO(payload) if payload is not None else None)
    data = zstandard.ZstdCompressor().compress(buffer.getvalue())
    name = hashlib.sha256(data).hexdigest()
    path = tmp_path / f"{name}.tar.zst"
    path.write_bytes(data)
    return path, name


def member(name, payload=b"owned\n", kind=tarfile.REGTYPE, link=""):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    if kind == tarfile.REGTYPE:
        info.size = len(payload)
        return info, payload
    return info, None


HOSTILE = {
    "dotdot": [member("run", kind=tarfile.DIRTYPE), member("run/../../escaped.txt")],
    "absolute": [member("run", kind=tarfile.DIRTYPE), member("/tmp/escaped-absolute.txt")],
    "other-root": [member("run", kind=tarfile.DIRTYPE), member("elsewhere/escaped.txt")],
    "symlink-out": [member("run", kind=tarfile.DIRTYPE), member("run/ln", kind=tarfile.SYMTYPE, link="../../..")],
    "symlink-abs": [member("run", kind=tarfile.DIRTYPE), member("run/ln", kind=tarfile.SYMTYPE, link="/etc")],
    "symlink-then-write": [member("run", kind=tarfile.DIRTYPE),
                           member("run/ln", kind=tarfile.SYMTYPE, link="../.."),
                           member("run/ln/escaped.txt")],
    "hardlink-out": [member("run", kind=tarfile.DIRTYPE), member("run/hl", kind=tarfile.LNKTYPE, link="../secret")],
    "device": [member("run", kind=tarfile.DIRTYPE), member("run/dev", kind=tarfile.CHRTYPE)],
    "fifo": [member("run", kind=tarfile.DIRTYPE), member("run/fifo", kind=tarfile.FIFOTYPE)],
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_archive_writes_nothing_outside(tmp_path, case):
    blob_file, name = hostile_blob(tmp_path, HOSTILE[case])
    area = tmp_path / "area"
    (area / "data").mkdir(parents=True)
    (area / "secret").write_text("keep me")
    before = sorted(p.relative_to(area).as_posix() for p in area.rglob("*"))
    with pytest.raises(blobs.UnsafeArchive):
        blobs.unpack(blob_file, name, area / "data" / "run")
    after = sorted(p.relative_to(area).as_posix() for p in area.rglob("*"))
    assert after == before                      # nothing created, not even the target
    assert not (tmp_path / "escaped.txt").exists()
    assert not os.path.exists("/tmp/escaped-absolute.txt")
    assert (area / "secret").read_text() == "keep me"


def test_even_links_inside_the_target_are_refused(tmp_path):
    # pack never writes links, so a blob holding one was not made by pack (docs/security.md).
    blob_file, name = hostile_blob(tmp_path, [
        member("run", kind=tarfile.DIRTYPE), member("run/a.txt", b"data"),
        member("run/ln", kind=tarfile.SYMTYPE, link="a.txt")])
    with pytest.raises(blobs.UnsafeArchive, match="is a link"):
        blobs.unpack(blob_file, name, tmp_path / "out" / "run")
    assert not (tmp_path / "out" / "run").exists()


def test_unpack_refuses_to_overwrite_unless_asked(tmp_path):
    src = make_tree(tmp_path / "in")
    result = blobs.pack(src, tmp_path / "cache")
    dest = tmp_path / "out" / "run"
    dest.mkdir(parents=True)
    (dest / "mine.txt").write_text("local")
    blob_file = blobs.blob_path(tmp_path / "cache", result.blob)
    with pytest.raises(UserError, match="already exists"):
        blobs.unpack(blob_file, result.blob, dest)
    assert (dest / "mine.txt").exists()
    blobs.unpack(blob_file, result.blob, dest, replace=True)
    assert not (dest / "mine.txt").exists() and blobs.content_hash(dest) == result.content


def test_stale_unpack_temp_dirs_are_cleared(tmp_path):
    src = make_tree(tmp_path / "in")
    result = blobs.pack(src, tmp_path / "cache")
    stale = tmp_path / "out" / ".run.unpack-dead"
    stale.mkdir(parents=True)
    (stale / "half.ndjson").write_text("{")
    blobs.unpack(blobs.blob_path(tmp_path / "cache", result.blob), result.blob, tmp_path / "out" / "run")
    assert not stale.exists()
