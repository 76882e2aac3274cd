"""Response cache: every answered request, keyed by the SHA-256 of the request.

Why SQLite in WAL mode: it is in the standard library, a commit is atomic and
survives the process being killed (kill -9 loses at most the uncommitted batch,
never a committed one, never the file), several processes may share one file
(readers never block the writer; writers queue on a lock with a busy timeout),
and a batched commit costs tens of microseconds, so thousands of answers per
second are cheap. `synchronous=NORMAL` keeps commits free of fsync: a committed
answer survives a crash of the runner (the OS has it); only a power cut could
roll back the last moments, which merely means re-asking those requests.

The runner calls `put` for every answer and `flush` often (a batch at a time);
it writes an answer's record to the run folder only after the batch holding it
has been committed, so anything visible in a run folder is also in the cache.

With ``background_checkpoints`` (the API runner) the connection does not checkpoint:
SQLite's automatic checkpoint copies the WAL into the database file and fsyncs both
inside whichever commit crosses 1,000 pages, tens of milliseconds during which the
runner's event loop would stand still (docs/performance.md). A thread with its own
connection runs a passive checkpoint instead, after every few megabytes committed; what
is stored, and when it is durable, stays the same.

A second table, ``too_long``, holds the keys of requests that `vllm run-batch`
refused because the prompt does not fit the model's context (read-batch only;
docs/decisions.md). It is kept apart from ``responses`` so that nothing but real
answers is ever read as an answer (older versions and API mode never see it):
batch mode reads a key found only there as a prompt-too-long sample, so the next
write-batch moves on instead of asking for it forever; API mode ignores it and
asks the server again, as it always does for prompts too long.
"""
from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Iterable

from resolver.core import UserError

CACHE_FILE_NAME = "responses.sqlite"
# Request fields that change how the answer travels, not what it is: excluded
# from the key so a streamed and a plain request share one cache entry.
TRANSPORT_ONLY_FIELDS = ("stream", "stream_options")
_SELECT_CHUNK = 500  # stays well under SQLite's bound-parameter limit
# Committed bytes between background checkpoints: about SQLite's own 1,000 pages of WAL,
# counting the index pages each insert also writes.
CHECKPOINT_EVERY_BYTES = 2_000_000


def canonical_request(body: dict, stop_loops: dict | None = None) -> bytes:
    """The canonical JSON (sorted keys, no spaces, UTF-8) of a request, transport fields dropped.

    When a body has no transport fields these bytes are also a valid request to
    send, which saves serialising it twice. `stop_loops` (the sampler's normalised loop
    rule) is part of the key, never of the request: an answer stopped in a loop is
    never handed to a run without stop_loops, nor to one with other thresholds.
    """
    canonical = {k: v for k, v in body.items() if k not in TRANSPORT_ONLY_FIELDS}
    if stop_loops is not None:
        canonical["stop_loops"] = stop_loops
    return json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def request_key(body: dict, stop_loops: dict | None = None) -> str:
    """sha256 hex of the canonical JSON of a chat request body (transport fields dropped)."""
    return hashlib.sha256(canonical_request(body, stop_loops)).hexdigest()


def resolve_cache_path(arg: str | Path) -> Path:
    """`--cache` is a directory (the file inside is responses.sqlite) or a file."""
    path = Path(arg)
    text = str(arg)
    if path.is_dir() or text.endswith(("/", "\\")) or (not path.exists() and not path.suffix):
        return path / CACHE_FILE_NAME
    return path


class _Checkpointer:
    """A thread with its own connection that checkpoints the WAL when `poke`d."""

    def __init__(self, path: Path, busy_timeout_s: float):
        self._db = sqlite3.connect(str(path), timeout=busy_timeout_s, isolation_level=None,
                                   check_same_thread=False)
        self._wake = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="cache-checkpoint", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._stopping:
                break
            try:
                # PASSIVE: copies what it can without waiting for, or blocking, the writer.
                self._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            except sqlite3.Error:
                pass        # busy or failing: the next checkpoint, or closing, catches up
        self._db.close()

    def poke(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        self._thread.join()


class ResponseCache:
    """A SQLite (WAL) map from request key to the normalised answer (a dict)."""

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 60.0, background_checkpoints: bool = False):
        self.path = resolve_cache_path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = self._open(busy_timeout_s)
            self._checkpointer = None
            if background_checkpoints:
                self._db.execute("PRAGMA wal_autocheckpoint=0")
                self._checkpointer = _Checkpointer(self.path, busy_timeout_s)
        except (OSError, sqlite3.Error) as exc:
            raise UserError(f"--cache {str(path)!r}: cannot open the response cache ({exc}); "
                            "give a writable directory or .sqlite file") from None
        self._pending: dict[str, str] = {}
        self._pending_too_long: dict[str, str] = {}
        self._replacing: set[str] = set()     # keys whose stored value is malformed (see put)
        self._unchecked_bytes = 0             # committed since the last background checkpoint

    def _open(self, busy_timeout_s: float) -> sqlite3.Connection:
        """Connect and set up, retrying while another process is doing the same.

        Switching a new file to WAL needs an exclusive lock, and SQLite answers a race
        for it with "database is locked" at once, without waiting out the busy timeout;
        two runners started together on a fresh cache hit exactly that.
        """
        deadline = time.monotonic() + busy_timeout_s
        while True:
            db = sqlite3.connect(str(self.path), timeout=busy_timeout_s,
                                 isolation_level=None, check_same_thread=False)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("CREATE TABLE IF NOT EXISTS responses ("
                           " key TEXT PRIMARY KEY, response TEXT NOT NULL, created REAL NOT NULL)")
                db.execute("CREATE TABLE IF NOT EXISTS too_long ("
                           " key TEXT PRIMARY KEY, message TEXT NOT NULL, created REAL NOT NULL)")
                return db
            except sqlite3.OperationalError as exc:
                db.close()
                if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(random.uniform(0.01, 0.1))

    # ---- reading -----------------------------------------------------------
    def get(self, key: str) -> dict | None:
        """The cached answer for `key` (uncommitted puts included), or None."""
        if key in self._pending:
            return json.loads(self._pending[key])
        row = self._db.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def get_many(self, keys: Iterable[str]) -> dict[str, dict]:
        """{key: answer} for those of `keys` that are cached."""
        keys = list(dict.fromkeys(keys))
        found = {k: json.loads(self._pending[k]) for k in keys if k in self._pending}
        rest = [k for k in keys if k not in found]
        for start in range(0, len(rest), _SELECT_CHUNK):
            chunk = rest[start:start + _SELECT_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT key, response FROM responses WHERE key IN ({marks})", chunk)
            found.update((k, json.loads(v)) for k, v in rows)
        return found

    def too_long_many(self, keys: Iterable[str]) -> dict[str, str]:
        """{key: server message} for those of `keys` marked prompt-too-long by read-batch."""
        keys = list(dict.fromkeys(keys))
        found = {k: self._pending_too_long[k] for k in keys if k in self._pending_too_long}
        rest = [k for k in keys if k not in found]
        for start in range(0, len(rest), _SELECT_CHUNK):
            chunk = rest[start:start + _SELECT_CHUNK]
            marks = ",".join("?" * len(chunk))
            found.update(self._db.execute(f"SELECT key, message FROM too_long WHERE key IN ({marks})", chunk))
        return found

    def __contains__(self, key: str) -> bool:
        if key in self._pending:
            return True
        return self._db.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone() is not None

    def __len__(self) -> int:
        committed = self._db.execute("SELECT count(*) FROM responses").fetchone()[0]
        return committed + len(set(self._pending) - self._committed(self._pending))

    def _committed(self, keys: Iterable[str]) -> set[str]:
        """Which of `keys` are already committed."""
        keys = list(keys)
        out: set[str] = set()
        for start in range(0, len(keys), _SELECT_CHUNK):
            chunk = keys[start:start + _SELECT_CHUNK]
            marks = ",".join("?" * len(chunk))
            out.update(r[0] for r in self._db.execute(
                f"SELECT key FROM responses WHERE key IN ({marks})", chunk))
        return out

    def keys(self) -> set[str]:
        """Every committed key (tests and diagnostics)."""
        return {r[0] for r in self._db.execute("SELECT key FROM responses")}

    # ---- writing -----------------------------------------------------------
    def put(self, key: str, response: dict, replace: bool = False) -> None:
        """Queue an answer; it is durable after the next `flush`.

        The first answer stored for a request wins, except with `replace`, which is
        only for overwriting a stored value that is not a valid answer at all
        (written by an older version that cached malformed replies).
        """
        self._pending[key] = json.dumps(response, ensure_ascii=False, separators=(",", ":"))
        if replace:
            self._replacing.add(key)

    def put_too_long(self, key: str, message: str) -> None:
        """Queue a prompt-too-long marker (read-batch); durable after the next `flush`, first one wins."""
        self._pending_too_long[key] = message

    @property
    def pending(self) -> int:
        return len(self._pending) + len(self._pending_too_long)

    def flush(self) -> int:
        """Commit every queued answer and marker in one transaction; returns how many."""
        if not self._pending and not self._pending_too_long:
            return 0
        now = time.time()
        rows = [(k, v, now) for k, v in self._pending.items()]
        marks = [(k, v, now) for k, v in self._pending_too_long.items()]
        self._db.execute("BEGIN IMMEDIATE")
        try:
            # The first answer stored for a request wins: answers are immutable.
            self._db.executemany(
                "INSERT OR IGNORE INTO responses (key, response, created) VALUES (?, ?, ?)", rows)
            self._db.executemany("INSERT OR IGNORE INTO too_long (key, message, created) VALUES (?, ?, ?)", marks)
            fixes = [(v, now, k) for k, v, _ in rows if k in self._replacing]
            if fixes:
                self._db.executemany("UPDATE responses SET response = ?, created = ? WHERE key = ?", fixes)
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._pending.clear()
        self._pending_too_long.clear()
        self._replacing.clear()
        if self._checkpointer is not None:
            self._unchecked_bytes += sum(len(v) for _, v, _ in rows) + sum(len(v) for _, v, _ in marks)
            if self._unchecked_bytes >= CHECKPOINT_EVERY_BYTES:
                self._unchecked_bytes = 0
                self._checkpointer.poke()
        return len(rows) + len(marks)

    def close(self) -> None:
        try:
            self.flush()
        finally:
            if self._checkpointer is not None:
                self._checkpointer.stop()
            self._db.close()      # the last connection checkpoints what is left

    def __enter__(self) -> "ResponseCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
