"""What the runner's start-up and per-sample path leave out (docs/performance.md, *Runner
dispatch*): task modules it does not run, a flush per record."""
from __future__ import annotations

import subprocess
import sys

from conftest import REPO

from resolver.records import RecordWriter, iter_records
from resolver.tasks import get_task, task_names


def test_a_task_loads_its_own_module_only():
    code = ("import sys; from resolver.tasks import get_task; get_task('boolean'); get_task('arithmetic'); "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('resolver.tasks.'))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    # guess_store: the guess rates kept on disk (guess.py's helper, not a task)
    assert out.stdout.split() == ["resolver.tasks.arithmetic", "resolver.tasks.base", "resolver.tasks.boolean",
                                  "resolver.tasks.guess", "resolver.tasks.guess_store"]


def test_every_task_is_still_found_by_name():
    # The thirteen generators of resolver/tasks, listed by hand.
    names = ["arithmetic", "boolean", "brackets", "cars", "dates", "letters", "movies", "objects", "sequence",
             "shapes", "shuffle", "sort", "tables"]
    assert task_names() == names
    assert [get_task(n).name for n in names] == names


def test_write_many_appends_lines_in_order(tmp_path):
    path = tmp_path / "step.ndjson"
    with RecordWriter(path) as writer:
        writer.write({"key": "a", "answer": "é"})
        writer.write_many([{"key": "b"}, {"key": "c"}])
        writer.write_many([])
        assert writer.written == 3
    assert path.read_text(encoding="utf-8") == '{"key": "a", "answer": "é"}\n{"key": "b"}\n{"key": "c"}\n'
    assert [r["key"] for _, r, _ in iter_records(path)] == ["a", "b", "c"]


def test_background_checkpoints_keep_every_answer(tmp_path):
    """The API runner's cache checkpoints from a thread of its own: the same rows, readable by
    another connection while open and after closing, and no thread left behind."""
    import sqlite3
    import threading

    from resolver.client.cache import CHECKPOINT_EVERY_BYTES, ResponseCache

    answer = "x" * 5000
    batches = 3 * CHECKPOINT_EVERY_BYTES // (50 * len(answer)) + 1     # enough for three checkpoints
    with ResponseCache(tmp_path, background_checkpoints=True) as cache:
        assert cache._db.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
        for b in range(batches):
            for i in range(50):
                cache.put(f"k{b}-{i}", {"content": f"{b}-{i} {answer}"})
            cache.flush()
        other = sqlite3.connect(tmp_path / "responses.sqlite")
        assert other.execute("SELECT count(*) FROM responses").fetchone() == (50 * batches,)
        other.close()
    assert not [t for t in threading.enumerate() if t.name == "cache-checkpoint"]
    with ResponseCache(tmp_path) as again:
        assert len(again) == 50 * batches
        assert again.get(f"k{batches - 1}-49") == {"content": f"{batches - 1}-49 {answer}"}
        assert again._db.execute("PRAGMA wal_autocheckpoint").fetchone() == (1000,)
    assert not (tmp_path / "responses.sqlite-wal").exists()     # the last close checkpointed the rest
