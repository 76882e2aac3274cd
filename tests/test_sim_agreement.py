"""Simulated profiles agree problem by problem (docs/simulator.md, "Hard for everyone").

Every input is deterministic (fixed texts, fixed rng seeds), so each statistical check
gives the same answer on every run; the tolerances are 4-5 standard errors of the
sample size, against references computed here from the profiles' own numbers and from
scipy, not from the simulator's code.
"""
from __future__ import annotations

import functools
import math
import random
import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import kstest, multivariate_normal, norm

from resolver.sim.agreement import agreement_table, phi, simulated_correctness, within_point_phi
from resolver.sim.profiles import LATENT_CORRELATION, PROFILES, Problem, choose_outcome, problem_latent
from tests.support.runner import REPO, SAMPLER, TEMPLATE, TINY

N = 20_000
PAIRS_IN_BAND = [("sim-strong", "sim-mid"), ("sim-strong", "sim-thinker"), ("sim-mid", "sim-weak"),
                 ("sim-mid", "sim-loopy"), ("sim-mid", "sim-thinker"), ("sim-weak", "sim-loopy"),
                 ("sim-loopy", "sim-thinker")]


def rates_by_hand(profile, d):
    """(P(correct), P(loop), P(invalid)) written out from the profile's numbers (docs/simulator.md)."""
    accuracy = profile.accuracy_easy - (profile.accuracy_easy - profile.accuracy_hard) * d ** profile.curve
    loop = profile.loop_easy + (profile.loop_hard - profile.loop_easy) * d
    return (1 - loop - profile.invalid_rate) * accuracy, loop, profile.invalid_rate


def copula_phi(p, q, rho):
    """phi of two indicators 1[X < Phi^-1(p)], 1[Y < Phi^-1(q)] with corr(X, Y) = rho (scipy)."""
    both = multivariate_normal(mean=[0, 0], cov=[[1, rho], [rho, 1]]).cdf([norm.ppf(p), norm.ppf(q)])
    return (both - p * q) / math.sqrt(p * (1 - p) * q * (1 - q))


LATENTS = [problem_latent(f"problem number {i}: what is {i} + {i % 7}?") for i in range(N)]


DRAWS_PER_ANSWER = 4      # what choose_outcome draws at most: two for its normal, a roll, a loop kind


@functools.lru_cache(maxsize=None)
def first_draws(name):
    """The first draws of answer i's generator random.Random(f"{name}|{i}"), for every i: seeding
    20,000 generators costs more than the outcomes, and the same seeds serve every difficulty."""
    return [tuple(rng.random() for _ in range(DRAWS_PER_ANSWER))
            for rng in (random.Random(f"{name}|{i}") for i in range(N))]


class Replay(random.Random):
    """random.Random giving back one answer's recorded draws in order: choose_outcome sees the
    numbers random.Random(f"{name}|{i}") would give it (gauss and choices draw through random())."""

    def replay(self, draws):
        self._draws = iter(draws)
        self.gauss_next = None           # gauss keeps its second normal here: none from another answer
        return self

    def random(self):
        try:
            return next(self._draws)
        except StopIteration:
            raise AssertionError(f"choose_outcome drew more than DRAWS_PER_ANSWER = {DRAWS_PER_ANSWER}") from None

    def getrandbits(self, k):
        raise AssertionError("choose_outcome drew bits: record them in first_draws too")


def outcomes(name, d, shared=True):
    profile, rng = PROFILES[name], Replay(0)
    return [choose_outcome(profile, Problem(target="42", response_enum=None, difficulty=d, words=[],
                                            latent=z if shared else None), rng.replay(draws))
            for draws, z in zip(first_draws(name), LATENTS)]


def test_latent_is_standard_normal_and_depends_only_on_the_problem_text():
    assert kstest(LATENTS, "norm").pvalue > 1e-3
    assert abs(np.mean(LATENTS)) < 4 / math.sqrt(N) and abs(np.std(LATENTS) - 1) < 0.03
    assert problem_latent("Evaluate 3 + 4.") == problem_latent("Evaluate 3 + 4.\n")
    assert problem_latent("Evaluate 3 + 4.") != problem_latent("Evaluate 3 + 5.")


@pytest.mark.parametrize("name", sorted(PROFILES))
@pytest.mark.parametrize("d", [0.0, 0.5, 1.0])
def test_each_profile_keeps_its_own_rates(name, d):
    got = outcomes(name, d)
    for rate, share in zip(rates_by_hand(PROFILES[name], d),
                           (got.count("correct") / N, sum(o.startswith("loop:") for o in got) / N,
                            got.count("invalid") / N)):
        assert abs(share - rate) <= 4.5 * math.sqrt(max(rate * (1 - rate), 1e-4) / N), (share, rate)


@pytest.mark.parametrize("d", [0.2, 0.8])
def test_phi_between_profiles_is_the_copulas_and_in_the_documented_band(d):
    correct = {name: [o == "correct" for o in outcomes(name, d)] for name in PROFILES}
    for a, b in PAIRS_IN_BAND:
        expected = copula_phi(rates_by_hand(PROFILES[a], d)[0], rates_by_hand(PROFILES[b], d)[0],
                              LATENT_CORRELATION)
        measured = np.corrcoef(correct[a], correct[b])[0, 1]
        assert abs(measured - expected) < 0.04, (a, b, measured, expected)
        assert 0.28 <= measured <= 0.5, (a, b, measured)


def test_without_a_shared_latent_answers_are_independent():
    a = [o == "correct" for o in outcomes("sim-strong", 0.5, shared=False)]
    b = [o == "correct" for o in outcomes("sim-mid", 0.5, shared=False)]
    assert abs(np.corrcoef(a, b)[0, 1]) < 4 / math.sqrt(N)


def test_phi_helpers_agree_with_numpy():
    rng = random.Random(3)
    groups = {}
    for point in range(5):
        base = rng.random()
        a = [rng.random() < base for _ in range(40)]
        b = [x if rng.random() < 0.6 else rng.random() < 0.5 for x in a]
        groups[point] = (a, b)
    flat_a = [x for a, _ in groups.values() for x in a]
    flat_b = [y for _, b in groups.values() for y in b]
    assert phi(flat_a, flat_b) == pytest.approx(np.corrcoef(flat_a, flat_b)[0, 1])
    resid_a = np.concatenate([np.array(a, float) - np.mean(a) for a, _ in groups.values()])
    resid_b = np.concatenate([np.array(b, float) - np.mean(b) for _, b in groups.values()])
    assert within_point_phi(groups) == pytest.approx(np.corrcoef(resid_a, resid_b)[0, 1])
    assert math.isnan(phi([True, True], [False, True]))


def test_tiny_config_through_the_servers_answer_path():
    correct = simulated_correctness(str(TINY), str(TEMPLATE), str(SAMPLER), ["sim-strong", "sim-mid"], 40)
    (row,) = agreement_table(correct)
    assert row["n"] == 14 * 40
    # n = 560: the documented 0.40 within points, with room for its sampling error (about 0.04)
    assert 0.25 <= row["phi_within_points"] <= 0.55 and row["phi"] >= row["phi_within_points"] - 0.05
    assert correct == simulated_correctness(str(TINY), str(TEMPLATE), str(SAMPLER),
                                            ["sim-strong", "sim-mid"], 40)   # deterministic


def test_bad_profiles_exit_2_with_one_line():
    proc = subprocess.run([sys.executable, "-m", "resolver.sim.agreement", "--profiles", "sim-strong,gpt-4"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "sim-mid" in proc.stderr


def test_pointsdb_pairs_samples_of_the_same_problem_only(tmp_path, capsys):
    import duckdb

    from resolver.cli.agreement import main
    from resolver.sim.agreement import collected_correctness

    path = tmp_path / "mini.db"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE evals (eval_id VARCHAR)")
    con.execute("CREATE TABLE points (model VARCHAR, eval_id VARCHAR, task VARCHAR, task_version INTEGER, "
                "params JSON, outcome UTINYINT[], sample_index INTEGER[])")
    rows = [  # outcome codes: 0 correct, 1 incorrect, 2 invalid, 3 truncated
        ("m-a", "aaa", "arithmetic", 1, '{"length": 4}', [0, 0, 1, 1], [0, 1, 2, 3]),
        ("m-b", "bbb", "arithmetic", 1, '{"length": 4}', [0, 2, 1, 3], [0, 1, 2, 3]),
        ("m-a", "aaa", "arithmetic", 1, '{"length": 8}', [0, 1, 0], [0, 1, 5]),     # sample 5: A only
        ("m-b", "bbb", "arithmetic", 1, '{"length": 8}', [1, 0], [1, 0]),
        ("m-a", "aaa", "boolean", 1, '{"length": 4}', [0], [0]),
        ("m-b", "bbb", "boolean", 2, '{"length": 4}', [0], [0]),                    # another task version
    ]
    con.executemany("INSERT INTO points VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    con.close()
    (row,) = agreement_table(collected_correctness(path))
    # by hand: pairs (1,1) (1,0) (0,0) (0,0) at length 4 and (1,1) (0,0) at length 8
    assert row["n"] == 6 and row["accuracy_a"] == pytest.approx(0.5) and row["accuracy_b"] == pytest.approx(2 / 6)
    assert row["phi"] == pytest.approx(6 / math.sqrt(3 * 3 * 2 * 4))
    assert row["phi_within_points"] == pytest.approx(1 / math.sqrt(1.5 * 1.25))
    assert main(["--pointsdb", str(path)]) == 0
    assert "| m-a (aaa) | m-b (bbb) | 6 | 0.500 | 0.333 | 0.71 | 0.73 |" in capsys.readouterr().out
