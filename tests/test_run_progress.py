"""What API mode's bar shows (resolver/run/progress.py; docs/runner.md, *Progress*): samples
done of samples planned, a postfix of tok/s, cached, retries and failed (at most every 0.5 s),
and one line per finished step. A recording bar and a hand-driven clock; the step line's
interval is computed independently (tests.support.runner.skill_by_root)."""
from __future__ import annotations

from resolver.run import Reporter
from resolver.run.progress import Progress, step_line
from resolver.run.rounds import Tally
from tests.support.runner import skill_by_root


class Bar:
    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.total = kwargs["total"]
        self.disable = kwargs["disable"]
        self.n, self.refreshed, self.closed = 0, 0, False
        self.postfixes: list[str] = []

    def update(self, n=1):
        self.n += n

    def refresh(self):
        self.refreshed += 1

    def set_postfix_str(self, s="", refresh=True):
        self.postfixes.append(s)

    def close(self):
        self.closed = True


class Shown(Reporter):
    def __init__(self):
        self.bars: list[Bar] = []
        self.lines: list[str] = []

    def bar(self, **kwargs):
        self.bars.append(Bar(**kwargs))
        return self.bars[-1]

    def note(self, line):
        self.lines.append(line)


class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


def usage(tokens: int) -> dict:
    return {"usage": {"prompt_tokens": 3, "completion_tokens": tokens}}


def test_the_bar_counts_samples_of_a_plan_that_grows_with_each_round():
    reporter = Shown()
    progress = Progress(reporter, "sim-mid", lambda: (0, 0), clock=Clock(100.0))
    [bar] = reporter.bars
    assert bar.kwargs == {"total": 0, "unit": "sample", "desc": "sim-mid", "disable": False, "smoothing": 0.1}
    progress.plan(14 * 8)
    assert bar.total == 112 and bar.refreshed == 0
    progress.plan_more(8)                                 # a step's second round
    assert bar.total == 120 and bar.refreshed == 1
    for _ in range(3):
        progress.sample_done()
    progress.close()
    assert bar.n == 3 and bar.closed


def test_the_postfix_says_tokens_per_second_cached_retries_and_failed_at_most_twice_a_second():
    reporter, clock = Shown(), Clock(100.0)
    counts = {"retries": 2, "failed": 1}
    progress = Progress(reporter, "m", lambda: (counts["retries"], counts["failed"]), clock=clock)
    bar = reporter.bars[0]
    progress.record_made(usage(300), cached=True)
    progress.record_made({"usage": None}, cached=False)          # a record without usage counts no tokens
    clock.now = 100.2
    progress.sample_done()
    assert bar.postfixes == ["tok/s=1500 cached=1 retries=2 failed=1"]     # 300 tokens / 0.2 s
    progress.record_made(usage(100), cached=False)
    counts["failed"] = 4
    clock.now = 100.6                                             # 0.4 s after the last: not yet
    progress.sample_done()
    assert len(bar.postfixes) == 1
    clock.now = 100.8
    progress.sample_done()
    assert bar.postfixes[1] == "tok/s=500 cached=1 retries=2 failed=4"    # 400 / 0.8
    assert bar.n == 3


def test_a_hidden_bar_formats_no_postfix():
    reporter = Shown()
    asked = []
    progress = Progress(reporter, "m", lambda: asked.append(1) or (0, 0), shown=False, clock=Clock(5.0))
    progress.sample_done()
    assert reporter.bars[0].kwargs["disable"] is True
    assert reporter.bars[0].postfixes == [] and asked == []


def test_a_finished_step_prints_its_rounds_samples_and_interval():
    tally = Tally()
    for i in range(24):                                   # 20 of 24 right, no guessing, plus 2 truncated
        tally.add({"is_truncated": False, "is_correct": i < 20, "is_valid": True, "guess_chance": 0.0})
    for _ in range(2):
        tally.add({"is_truncated": True, "is_correct": False, "is_valid": False})
    low, high, _ = skill_by_root(20, 24, 0.0)
    assert step_line("000_arithmetic_length-4", 3, tally) == (
        f"000_arithmetic_length-4: 3 round(s), 26 samples, excess accuracy 0.83 "
        f"(95% interval {low:.2f}-{high:.2f})")
    reporter = Shown()
    Progress(reporter, "m", lambda: (0, 0)).step_done("000_arithmetic_length-4", 3, tally)
    Progress(reporter, "m", lambda: (0, 0), notes=False).step_done("000_arithmetic_length-4", 3, tally)
    assert reporter.lines == [step_line("000_arithmetic_length-4", 3, tally)]      # --quiet: none


def test_a_step_below_chance_says_so():
    """3 of 16 yes/no answers right (guess 1/2 each): below chance (tests/test_run_rounds.py works it by hand)."""
    tally = Tally()
    for i in range(16):
        tally.add({"is_truncated": False, "is_correct": i < 3, "is_valid": True, "guess_chance": 0.5})
    assert step_line("s", 1, tally) == "s: 1 round(s), 16 samples, excess accuracy 0.00 (below chance)"
