"""Guess rates kept on disk (resolver/tasks/guess_store.py): the same rates as drawing them,
drawn again whenever the code changes, and never an error when the file is unusable."""
from __future__ import annotations

import dataclasses
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from resolver.tasks import guess, guess_store
from resolver.tasks.guess_store import GuessRateStore, tasks_fingerprint

REPO = Path(__file__).resolve().parent.parent


@dataclasses.dataclass(frozen=True)
class Dice:
    count: int
    sides: int


class Counted:
    """An answer function that counts its calls: two dice's total."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, p: Dice, rng: random.Random) -> int:
        self.calls += 1
        return sum(rng.randint(1, p.sides) for _ in range(p.count))


def rate_with(store: GuessRateStore | None, monkeypatch, params=Dice(2, 6), draws=1000) -> tuple[float, int]:
    """mode_rate with `store` as the process's store and an empty in-process cache: (rate, draws made)."""
    monkeypatch.setattr(guess, "_CACHE", {})
    monkeypatch.setattr(guess_store, "_STORE", [store])
    answer = Counted()
    return guess.mode_rate("dice", params, answer, draws), answer.calls


def test_a_stored_rate_is_the_drawn_rate_and_draws_nothing(tmp_path, monkeypatch):
    drawn, calls = rate_with(None, monkeypatch)
    assert calls == 1000
    # the most likely total of two dice is 7, probability 6/36: the draw is near it
    assert abs(drawn - 6 / 36) < 0.05
    cold, calls = rate_with(GuessRateStore(tmp_path / "g.sqlite", "f1"), monkeypatch)
    assert (cold, calls) == (drawn, 1000)
    warm, calls = rate_with(GuessRateStore(tmp_path / "g.sqlite", "f1"), monkeypatch)
    assert (warm, calls) == (drawn, 0)


def test_other_code_other_parameters_or_draws_draw_again(tmp_path, monkeypatch):
    path = tmp_path / "g.sqlite"
    rate_with(GuessRateStore(path, "f1"), monkeypatch)
    assert rate_with(GuessRateStore(path, "f2"), monkeypatch)[1] == 1000
    assert rate_with(GuessRateStore(path, "f1"), monkeypatch, params=Dice(3, 6))[1] == 1000
    assert rate_with(GuessRateStore(path, "f1"), monkeypatch, draws=500)[1] == 500


@pytest.mark.parametrize("spoil", ["garbage file", "folder in its place", "parent is a file", "rate out of range"])
def test_an_unusable_store_draws_and_raises_nothing(tmp_path, monkeypatch, spoil):
    drawn, _ = rate_with(None, monkeypatch)
    path = tmp_path / "g.sqlite"
    if spoil == "garbage file":
        path.write_bytes(bytes(range(256)) * 64)
    elif spoil == "folder in its place":
        path.mkdir()
    elif spoil == "parent is a file":
        (tmp_path / "file").write_text("x")
        path = tmp_path / "file" / "g.sqlite"
    else:
        store = GuessRateStore(path, "f1")
        store.put("dice", '{"count": 2, "sides": 6}', 1000, 0.5)
        with sqlite3.connect(path) as db:
            db.execute("UPDATE rates SET rate = 7.0")
    rate, calls = rate_with(GuessRateStore(path, "f1"), monkeypatch)
    assert (rate, calls) == (drawn, 1000)


def test_the_fingerprint_follows_every_source_and_vocab_file(tmp_path):
    for name, text in (("a.py", "x = 1\n"), ("b.py", "y = 2\n"), ("vocab/words.txt", "cat\n")):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    first = tasks_fingerprint(tmp_path)
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"byte code")
    assert tasks_fingerprint(tmp_path) == first          # byte code is not the source
    (tmp_path / "b.py").write_text("y = 3\n")
    second = tasks_fingerprint(tmp_path)
    assert second != first
    (tmp_path / "vocab" / "words.txt").write_text("dog\n")   # a word list the answers come from
    assert tasks_fingerprint(tmp_path) not in (first, second)
    assert len(tasks_fingerprint()) == 64


R12_SAMPLE = (
    "import random\n"
    "from resolver.config.loader import expand_steps, load_config\n"
    "from resolver.tasks import get_task\n"
    "steps = [s for s in expand_steps(load_config('configs/r12.yaml'))\n"
    "         if s.base_task in ('arithmetic', 'letters', 'tables')][::15]\n"
    "for s in steps:\n"
    "    case = next(iter(get_task(s.generator).generate_cases(s.gen_params, random.Random(s.seed), 1)))\n"
    "    print(s.base_task, case.guess_chance)\n")


def test_r12_rates_from_a_warm_store_equal_a_fresh_draw(tmp_path, monkeypatch, capsys):
    """Over a sample of r12's arithmetic, letters and tables points: a process of its own draws
    into a new store; reading it back, and drawing with the store off, give the same rates. The
    last two run in this process as a new one would: the store read from the environment again
    and the in-process cache empty (the two places a rate is kept, resolver/tasks/guess.py)."""
    store = str(tmp_path / "g.sqlite")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "REASONSCAPE_GUESS_CACHE": store}
    cold = subprocess.run([sys.executable, "-c", R12_SAMPLE], cwd=REPO, env=env, capture_output=True, text=True,
                          check=True).stdout

    def rates(setting: str) -> tuple[str, int]:
        """(printed rates, rates drawn) with REASONSCAPE_GUESS_CACHE=setting, as a fresh process."""
        monkeypatch.setenv("REASONSCAPE_GUESS_CACHE", setting)
        monkeypatch.setattr(guess_store, "_STORE", [])
        monkeypatch.setattr(guess, "_CACHE", {})
        drawn = []
        put = GuessRateStore.put
        monkeypatch.setattr(GuessRateStore, "put", lambda self, *a: (drawn.append(a), put(self, *a))[1])
        monkeypatch.chdir(REPO)
        exec(compile(R12_SAMPLE, "<r12 sample>", "exec"), {"__name__": "__r12_sample__"})
        return capsys.readouterr().out, len(drawn)

    (warm, warm_drawn), (off, _) = rates(store), rates("off")
    assert cold == warm == off
    assert warm_drawn == 0                               # every rate read back from the store
    assert len(cold.splitlines()) >= 10 and {"arithmetic", "letters", "tables"} <= {
        line.split()[0] for line in cold.splitlines()}
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM rates").fetchone()[0] >= 10
