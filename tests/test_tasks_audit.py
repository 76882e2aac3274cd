"""The shortcut audit (probe.py shortcuts): its players on hand-made problems, its
verdicts on a deliberately leaky and a fair generator, and r12 passing it in CI."""
from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass

import pytest

from resolver.audit import players
from resolver.audit.shortcuts import PointAudit, audit_point
from resolver.config.loader import expand_steps, load_config
from resolver.tasks import Task, TestCase, get_task, param

DATE_OPTIONS = ("Which date?\n\nOptions:\n(A) 03/15/2021\n(B) 03/14/2021\n(C) 04/14/2021\n"
                "(D) 03/14/2022\n(E) 02/13/2020")


def _case(text, target="(A)", enum=None):
    return TestCase(input=text, target=target, response_enum=enum)


def test_option_players_on_a_hand_worked_date_problem():
    case = _case(DATE_OPTIONS)
    ctx = {"answer_format": "Final Answer: (A) - (Z)"}
    # by position: B shares month+year with A, month+day+... worked by hand:
    # A=(03,15,2021) B=(03,14,2021) C=(04,14,2021) D=(03,14,2022) E=(02,13,2020)
    # agreements: A: B(2)+C(1)+D(1)=4; B: A2+C2+D2=6; C: A1+B2+D1=4; D: A1+B2+C1=4; E: 0
    assert players.component_vote(case, ctx) == "(B)"
    assert players.date_component_vote(case, ctx) == "(B)"
    # ordinals sorted: E < B < A < C < D -> median is A (03/15/2021)
    assert players.date_centroid(case, ctx) == "(A)"
    assert players.first_option(case, ctx) == "(A)" and players.last_option(case, ctx) == "(E)"
    story = _case("Today is March 1, 2021." + DATE_OPTIONS[len("Which date?"):])
    # days from 03/01/2021: A 14, B 13, C 44, D 378, E 382
    assert players.date_nearest_mentioned(story, ctx) == "(B)"


def test_date_parser_reads_the_four_formats():
    import datetime as dt

    want = dt.date(2021, 3, 14)
    for text in ("03/14/2021", "March 14, 2021", "the 73rd day of 2021", "03/14/21"):
        assert players.parse_date(text) == want, text
    assert players.parse_date("(A) nonsense") is None


def test_text_players_copy_numbers_and_cars():
    text = ("Car 1 is a red Audi. Car 2 is a blue BMW.\n\nAt the start: Ann is in car 2. Bo is in car 1.\n\n"
            "Then, in this order:\nAnn moves to car 3.\nBo moves to car 2.\n\nWhich car is Ann in at the end?")
    case = _case(text, target="3")
    assert players.last_car(case, {}) == "2"
    assert players.last_car_of_person(case, {}) == "3"
    assert players.last_number(_case("12 apples and 7 pears, -4 figs"), {}) == "-4"
    assert players.largest_number(_case("12 apples and 7 pears, -4 figs"), {}) == "12"
    assert players.sum_of_numbers(_case("12 apples and 7 pears, -4 figs"), {}) == "15"
    assert players.number_count(_case("12 apples and 7 pears, -4 figs"), {}) == "3"
    assert players.echo_input(_case("Words:\nb\na"), {}) == "b\na"
    # numbers inside the options block are labels, not data
    assert players.last_number(_case("5 things\n\nOptions:\n(A) 9\n(B) 8"), {}) == "5"


@dataclass(frozen=True)
class _LeakyParams:
    leak: bool = param(False)


class _Leaky(Task[_LeakyParams]):
    """Four options, the answer always the first: every question-blind constant finds it."""

    name = "leaky_test_only"
    answer_kind = "choice"
    answer_format = "Final Answer: (A) - (Z)"
    Params = _LeakyParams

    def generate(self, p, rng):
        labels = ["(A)", "(B)", "(C)", "(D)"]
        target = "(A)" if p.leak else rng.choice(labels)
        body = "\n".join(f"{lab} word{rng.randint(0, 99)}" for lab in labels)
        return TestCase(input=f"Q?\n\nOptions:\n{body}", target=target, response_enum=labels, guess_chance=0.25)


@pytest.mark.parametrize("leak", [True, False])
def test_a_leaky_point_is_flagged_and_a_fair_one_is_not(leak):
    task = _Leaky()
    cases = task.generate_cases({"leak": leak}, random.Random(5), 128)
    correct = audit_point(task, {}, cases, task.answer_format)
    point = PointAudit("s", "leaky", "0", {}, 128, 0.25, correct).finish()
    # independent reference: the share of targets equal to "(A)"
    assert correct["constant:(A)"] == sum(c.target == "(A)" for c in cases)
    assert correct["first_option"] == correct["constant:(A)"]
    assert point.flagged is leak
    if not leak:  # every rule stays within 0.05 + 3 SE of a fair 1/4
        assert point.best_accuracy - 0.25 <= 0.05 + 3 * math.sqrt(point.best_accuracy * (1 - point.best_accuracy) / 128)


def test_audit_json_matches_an_independent_recount(repo, script, tmp_path):
    out = tmp_path / "a.json"
    proc = script("probe.py", "shortcuts", "--config", "configs/r12.yaml", "--task", "shapes",
                  "--density", "corner", "--samples", "32", "--json", out, "--quiet")
    assert proc.returncode in (0, 1), proc.stderr
    data = json.loads(out.read_text())
    steps = {s.name: s for s in expand_steps(load_config(repo / "configs" / "r12.yaml"), density="corner",
                                             tasks=["shapes"])}
    assert {p["step"] for p in data["points"]} == set(steps)
    task = get_task("shapes")
    for point in data["points"][:4]:
        step = steps[point["step"]]
        cases = task.generate_cases(step.gen_params, random.Random(step.seed), 32)
        # constant (B): the share of cases whose target is (B), counted here without the grader
        assert point["accuracy"]["constant:(B)"] == pytest.approx(sum(c.target == "(B)" for c in cases) / 32)
        assert point["guess_chance"] == pytest.approx(sum(c.guess_chance for c in cases) / 32)
    assert "## Summary" in proc.stdout and "| shapes |" in proc.stdout


def test_bad_input_is_one_line_and_exit_2(script, tmp_path):
    proc = script("probe.py", "shortcuts", "--config", "configs/r12.yaml", "--samples", "4", "--json", "-")
    assert proc.returncode == 2 and "at least 16" in proc.stderr and "Traceback" not in proc.stderr
    proc = script("probe.py", "shortcuts", "--config", tmp_path / "missing.yaml")
    assert proc.returncode == 2 and "not found" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_r12_passes_the_shortcut_audit(script, tmp_path):
    """Every r12 point at lowdef density, 64 samples: no question-blind rule beats guess_chance
    (the allowance is 0.05 + 3 SE per point, 0.03 + 3 SE per pooled (task, tier))."""
    out = tmp_path / "r12.json"
    proc = script("probe.py", "shortcuts", "--config", "configs/r12.yaml", "--density", "lowdef",
                  "--samples", "64", "--json", out, "--quiet")
    data = json.loads(out.read_text())
    flagged = [f"{p['step']}: {p['best_player']} {p['best_accuracy']:.2f} vs {p['guess_chance']:.2f}"
               for p in data["points"] if p["flagged"]]
    pooled = [f"{r['base_task']}/{r['tier']}: {r['player']} {r['accuracy']:.3f} vs {r['guess_rate']:.3f}"
              for r in data["pooled"] if r["flagged"]]
    assert proc.returncode == 0 and not flagged and not pooled, (flagged[:10], pooled)
