"""What a failed request means for a run (resolver/run/failures.py; docs/runner.md, *Retries and
failures*): counted, shown once per message, held back until the server first answers, and the
two guards that stop a run, each with the one line the docs give."""
from __future__ import annotations

import pytest

from resolver.core import UserError
from resolver.run import Reporter, RunSummary
from resolver.run.failures import ABORT_AFTER_FAILURES, FailurePolicy

MSG = "HTTP 400: top_k must be positive"
FIRST_TEN = (f"stopping: the first 10 requests all failed (last: {MSG}); check --model, --apibase and the sampler")


class Notes(Reporter):
    def __init__(self):
        self.lines: list[str] = []

    def note(self, line: str) -> None:
        self.lines.append(line)


def policy(in_flight: int = 4) -> tuple[FailurePolicy, RunSummary, Notes]:
    summary, notes = RunSummary(), Notes()
    return FailurePolicy(summary, notes, in_flight), summary, notes


def answered(p: FailurePolicy, summary: RunSummary) -> None:
    """What the sender does when the server answers with a completion."""
    summary.answered += 1
    p.server_answered()


def test_the_documented_limit_is_ten():
    assert ABORT_AFTER_FAILURES == 10


def test_the_first_ten_failures_stop_the_run_with_one_line_and_show_nothing_else():
    p, summary, notes = policy()
    for _ in range(9):
        p.failed(MSG)
    assert notes.lines == [] and summary.failed == 9          # held: the run may still stop
    with pytest.raises(UserError) as stopped:
        p.failed(MSG)
    assert str(stopped.value) == FIRST_TEN
    with pytest.raises(UserError) as later:                   # a request in flight fails after it
        p.failed("HTTP 400: something else")
    assert str(later.value) == FIRST_TEN and summary.failed == 10
    assert notes.lines == []


def test_ten_malformed_replies_say_what_the_server_sent():
    p, _, _ = policy()
    for _ in range(9):
        p.failed("malformed reply: message is a str, not an object", sent='{"id": "x"}')
    with pytest.raises(UserError) as stopped:
        p.failed("malformed reply: message is a str, not an object", sent="<html>")
    assert str(stopped.value) == (
        "stopping: the first 10 requests all came back as replies that are not chat completions "
        "(last: malformed reply: message is a str, not an object; the server sent: <html>); "
        "check that --apibase is an OpenAI-compatible endpoint")


@pytest.mark.parametrize("malformed_at", [0, 9])
def test_a_mix_of_reasons_gets_the_general_line(malformed_at):
    """Only when every one of the ten was malformed does the line blame --apibase."""
    p, _, _ = policy()
    with pytest.raises(UserError) as stopped:
        for i in range(10):
            p.failed(MSG, sent="<html>" if i != malformed_at else None)
    assert str(stopped.value).startswith("stopping: the first 10 requests all failed")


def test_after_an_answer_each_message_is_shown_once_and_held_lines_come_out_in_order():
    p, summary, notes = policy()
    p.failed("HTTP 400: a")
    p.failed("HTTP 400: b")
    p.failed("HTTP 400: a")
    assert notes.lines == []
    answered(p, summary)
    assert notes.lines == ["request failed: HTTP 400: a", "request failed: HTTP 400: b"]
    p.failed("HTTP 400: b")
    p.failed("HTTP 400: c")
    assert notes.lines[2:] == ["request failed: HTTP 400: c"]
    assert summary.failures == {"HTTP 400: a": 2, "HTTP 400: b": 2, "HTTP 400: c": 1} and summary.failed == 5


def test_a_run_that_ends_shows_its_held_lines():
    p, _, notes = policy()
    p.failed("HTTP 400: a")
    p.release()
    assert notes.lines == ["request failed: HTTP 400: a"]
    p.failed("HTTP 400: b")                                   # after the release: at once
    assert notes.lines == ["request failed: HTTP 400: a", "request failed: HTTP 400: b"]


@pytest.mark.parametrize("in_flight,limit", [(4, 10), (5, 10), (16, 32)])
def test_a_streak_of_twice_the_pool_with_no_answer_stops(in_flight, limit):
    """max(10, 2 x P x T) failures in a row after an answer: the server went away."""
    p, summary, _ = policy(in_flight)
    answered(p, summary)
    for _ in range(limit - 1):
        p.failed(MSG)
    answered(p, summary)                                      # an answer ends the streak
    for _ in range(limit - 1):
        p.failed(MSG)
    with pytest.raises(UserError) as stopped:
        p.failed(MSG)
    assert str(stopped.value) == (f"stopping: the last {limit} requests all failed (last: {MSG}); "
                                  "everything answered so far is saved: run the same command again to resume")


def test_prompt_too_long_ends_the_streak_but_is_not_an_answer():
    """The server answered "too long": it works (streak over, lines shown), yet nothing was
    answered, so ten failures with no completion still stop as "the first 10"."""
    p, summary, notes = policy()
    p.failed(MSG)
    p.server_answered()                                       # what a prompt-too-long reply does
    assert p.streak == 0 and notes.lines == [f"request failed: {MSG}"] and summary.answered == 0
    with pytest.raises(UserError, match="the first 10 requests all failed"):
        for _ in range(9):
            p.failed(MSG)


def test_a_rejected_key_is_one_line_naming_where_the_key_comes_from():
    p, _, _ = policy()
    error = p.fatal("HTTP 401: invalid_api_key", "--apikey / $OPENAI_API_KEY")
    assert str(error) == ("stopping: HTTP 401: invalid_api_key; no request can succeed like this "
                          "(check --apikey / $OPENAI_API_KEY and the account's quota)")
