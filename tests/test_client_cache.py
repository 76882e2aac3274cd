"""resolver.client.cache: request keys, file/directory argument, commits, crash safety, sharing."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from resolver.client.cache import ResponseCache, request_key, resolve_cache_path
from resolver.core.errors import UserError
from tests.support.runner import REPO

BODY = {"model": "m", "messages": [{"role": "user", "content": "2+2? é"}], "temperature": 0.0,
        "max_tokens": 100, "top_k": 20}


def test_request_key_is_sha256_of_canonical_json():
    by_hand = hashlib.sha256(json.dumps(BODY, sort_keys=True, separators=(",", ":"),
                                        ensure_ascii=False).encode()).hexdigest()
    assert request_key(BODY) == by_hand
    reordered = dict(reversed(list(BODY.items())))
    assert request_key(reordered) == by_hand


def test_request_key_ignores_transport_but_not_sampling():
    assert request_key({**BODY, "stream": True, "stream_options": {"include_usage": True}}) == request_key(BODY)
    for change in ({"temperature": 0.1}, {"max_tokens": 101}, {"model": "n"}, {"top_k": 21}):
        assert request_key({**BODY, **change}) != request_key(BODY)


def test_cache_argument_file_or_directory(tmp_path):
    (tmp_path / "d").mkdir()
    assert resolve_cache_path(tmp_path / "d") == tmp_path / "d" / "responses.sqlite"
    assert resolve_cache_path(f"{tmp_path}/new/") == tmp_path / "new" / "responses.sqlite"
    assert resolve_cache_path(tmp_path / "plain") == tmp_path / "plain" / "responses.sqlite"
    assert resolve_cache_path(tmp_path / "mine.db") == tmp_path / "mine.db"


def test_put_is_visible_at_once_and_durable_after_flush(tmp_path):
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        cache.put("k1", {"content": "a"})
        assert cache.get("k1") == {"content": "a"} and "k1" in cache and len(cache) == 1
        assert cache.flush() == 1
        cache.put("k1", {"content": "second answer ignored"})
        cache.put("k2", {"content": "b"})
        assert cache.get_many(["k1", "k2", "k3"]).keys() == {"k1", "k2"}
    with ResponseCache(tmp_path / "c.sqlite") as again:
        assert again.get("k1") == {"content": "a"}     # the first stored answer wins
        assert again.get("k2") == {"content": "b"}     # close() flushes
        assert len(again) == 2


def test_unwritable_cache_is_a_user_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UserError, match="--cache"):
        ResponseCache(blocker / "sub" / "c.sqlite")


def _child(code: str, *args) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *map(str, args)], env=env)


def test_kill_9_keeps_every_committed_answer(tmp_path):
    path = tmp_path / "c.sqlite"
    child = _child("""
        import os, signal, sys
        from resolver.client.cache import ResponseCache
        cache = ResponseCache(sys.argv[1])
        for i in range(300):
            cache.put(f"k{i}", {"content": str(i)})
            if i % 50 == 49:
                cache.flush()
        os.kill(os.getpid(), signal.SIGKILL)   # 300 committed; nothing pending
        """, path)
    assert child.wait(60) == -signal.SIGKILL
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = dict(db.execute("SELECT key, response FROM responses"))
    assert len(rows) == 300 and json.loads(rows["k299"]) == {"content": "299"}


def test_two_processes_share_one_cache(tmp_path):
    path = tmp_path / "shared.sqlite"
    code = """
        import sys
        from resolver.client.cache import ResponseCache
        cache = ResponseCache(sys.argv[1])
        name = sys.argv[2]
        for i in range(1500):
            cache.put(f"{name}-{i}", {"content": name})
            cache.put(f"both-{i}", {"content": "shared"})
            if i % 20 == 19:
                cache.flush()
        cache.close()
        """
    children = [_child(code, path, "a"), _child(code, path, "b")]
    assert [c.wait(120) for c in children] == [0, 0]
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        keys = {k for (k,) in db.execute("SELECT key FROM responses")}
    assert len(keys) == 4500
    assert {f"a-{i}" for i in range(1500)} <= keys and {f"both-{i}" for i in range(1500)} <= keys


_together = None        # in each pool worker: the barrier all of them pass at once


def _keep(barrier) -> None:
    global _together
    _together = barrier


def _open_and_put_together(args):
    path, name = args
    _together.wait(60)      # all processes reach the open at the same moment (each its own task)
    cache = ResponseCache(path)
    cache.put(name, {"content": name})
    cache.flush()
    cache.close()
    return name


def test_processes_opening_a_fresh_cache_at_once_all_succeed(tmp_path):
    # Switching a new file to WAL races for an exclusive lock that SQLite refuses at once
    # ("database is locked", no busy wait); seen as a 1-in-160 failure of 8 simultaneous opens.
    # A barrier of 8 releases the 8 workers together once all have their task (a start time on
    # the clock would wait out a fixed lead each trial, spinning 8 processes on the cores).
    import multiprocessing

    context = multiprocessing.get_context("fork")
    with context.Pool(8, initializer=_keep, initargs=(context.Barrier(8),)) as pool:
        for trial in range(12):
            path = tmp_path / f"fresh-{trial}.sqlite"
            names = pool.map(_open_and_put_together, [(str(path), f"p{i}") for i in range(8)], chunksize=1)
            with sqlite3.connect(path) as db:
                assert {k for (k,) in db.execute("SELECT key FROM responses")} == set(names)
