"""Guess rates kept on disk between processes (docs/decisions.md, *Guess rates kept on disk*).

A guess rate drawn by `mode_rate` is a pure function of the task's code, its parameters and
the number of draws, and drawing it costs most of what generating a point costs (a thousand
answers). Every runner, simulator and audit process that generates r12 drew the same rates
again; this store keeps them in one SQLite file, `cache/guess-rates.sqlite` of the checkout.

The key holds a fingerprint of every file under resolver/tasks/ (code and vocab/), so any
change to a generator, its word lists or this package reads nothing written before it. The store is a speed-up only:
when the file cannot be opened, read or written (a read-only checkout, a damaged file, a lock
held too long) the rate is drawn as if there were no store, and nothing is raised.
`REASONSCAPE_GUESS_CACHE` names another file, or `off` for none.
"""
from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

__all__ = ["GuessRateStore", "guess_rate_store", "tasks_fingerprint"]

TASKS_DIR = Path(__file__).resolve().parent
DEFAULT_PATH = TASKS_DIR.parents[1] / "cache" / "guess-rates.sqlite"
ENV_PATH = "REASONSCAPE_GUESS_CACHE"
_BUSY_SECONDS = 5.0


def tasks_fingerprint(folder: Path = TASKS_DIR) -> str:
    """sha256 over the paths and bytes of every file under `folder` (sorted; byte code left out):
    the generators' code and the word lists and tables of vocab/ their answers are drawn from."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class GuessRateStore:
    """Rates by (task, parameters' JSON, draws) under one code fingerprint, in a SQLite file."""

    def __init__(self, path: Path, fingerprint: str) -> None:
        self.path, self.fingerprint = path, fingerprint
        self._db: sqlite3.Connection | None = None
        self._pid = os.getpid()
        self._broken = False

    def _key(self, task_name: str, identity: str, draws: int) -> str:
        return hashlib.sha256(f"{self.fingerprint}|{task_name}|{draws}|{identity}".encode()).hexdigest()

    def _connection(self) -> sqlite3.Connection | None:
        if self._pid != os.getpid():      # a forked child opens its own (SQLite's rule)
            self._db, self._pid = None, os.getpid()
        if self._db is None and not self._broken:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=_BUSY_SECONDS, isolation_level=None)
                # WAL: readers never wait on a writer; NORMAL: a commit is not an fsync (a lost
                # commit is only a rate drawn again)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("CREATE TABLE IF NOT EXISTS rates (key TEXT PRIMARY KEY, rate REAL NOT NULL)")
                self._db = db
            except (OSError, sqlite3.Error):
                self._broken = True
        return self._db

    def get(self, task_name: str, identity: str, draws: int) -> float | None:
        db = self._connection()
        if db is None:
            return None
        try:
            row = db.execute("SELECT rate FROM rates WHERE key = ?", (self._key(task_name, identity, draws),)).fetchone()
        except sqlite3.Error:
            self._broken, self._db = True, None
            return None
        rate = row[0] if row else None
        return rate if isinstance(rate, float) and 0.0 <= rate <= 1.0 else None

    def put(self, task_name: str, identity: str, draws: int, rate: float) -> None:
        db = self._connection()
        if db is None:
            return
        try:
            db.execute("INSERT OR IGNORE INTO rates (key, rate) VALUES (?, ?)",
                       (self._key(task_name, identity, draws), rate))
        except sqlite3.Error:
            self._broken, self._db = True, None


_STORE: list[GuessRateStore | None] = []


def guess_rate_store() -> GuessRateStore | None:
    """This process's store (opened on first use), or None when `REASONSCAPE_GUESS_CACHE=off`."""
    if not _STORE:
        setting = os.environ.get(ENV_PATH, "")
        if setting.lower() == "off":
            _STORE.append(None)
        else:
            _STORE.append(GuessRateStore(Path(setting) if setting else DEFAULT_PATH, tasks_fingerprint()))
    return _STORE[0]
