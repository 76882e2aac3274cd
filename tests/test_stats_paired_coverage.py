"""The paired interval of B - A keeps its 95% promise and earns its narrowness (docs/statistics.md,
"Paired comparisons"): a seeded, vectorised Monte-Carlo of model pairs with a known true difference
and per-problem correlation 0, 0.3 and 0.6, at r12's low / medium / high precision cell sizes, with
and without guessing and truncation."""
import numpy as np
import pytest

from resolver.stats import paired
from tests.studies import paired_coverage as study

THRESHOLD = 0.93
P_MODES = ("C_P", "E_P")


@pytest.fixture(scope="module")
def simulated():
    return study.simulate()


@pytest.fixture(scope="module")
def table(simulated):
    return study.summary(study.evaluate(*simulated))


def test_grid_is_the_issue_grid(table):
    assert sorted(table["rho"].unique()) == pytest.approx([0.0, 0.3, 0.6])
    assert sorted(table["size"].unique()) == ["high", "low", "medium"]
    assert sorted(table["guess"].unique()) == pytest.approx([0.0, 1 / 3])
    assert sorted(table["tau"].unique()) == pytest.approx([0.0, 0.2])
    # r12's cells: 21-36 points (configs/r12.yaml) of 16 / 32 / 64 samples (its precision levels' first round)
    assert study.SIZES == {"low": (21, 16), "medium": (28, 32), "high": (36, 64)}


def test_simulated_correlation_is_the_requested_one():
    # Independently of the simulator's lambda: the phi of the correct indicators from the 4 x 4 probabilities.
    for rho in (0.0, 0.3, 0.6):
        probs, _ = study.joint_probabilities(0.7, 0.76, 0.0, rho)
        correct_a, correct_b = probs[0].sum(), probs[:, 0].sum()
        phi = (probs[0, 0] - correct_a * correct_b) / np.sqrt(correct_a * (1 - correct_a) * correct_b * (1 - correct_b))
        assert phi == pytest.approx(rho)
        assert correct_a == pytest.approx(0.7) and correct_b == pytest.approx(0.76)


@pytest.mark.parametrize("mode", ["C_P", "E_P", "C_I", "E_I", "C_O", "E_O"])
def test_paired_interval_covers_at_least_93_percent_everywhere(table, mode):
    part = table[table["mode"] == mode]
    worst = part.loc[part["paired"].idxmin()]
    assert worst["paired"] >= THRESHOLD, worst.to_dict()


@pytest.mark.parametrize("rho,bar", [(0.3, 0.88), (0.6, 0.70)])
def test_paired_interval_is_narrower_where_the_models_agree(table, rho, bar):
    # P modes: rho is exactly the correlation of their successes, so every configuration meets the bar.
    judged = table[np.array([(a, b) in set(study.WIDTH_SKILLS) for a, b in zip(table["skill_a"], table["skill_b"])])
                   & (table["rho"] == rho)]
    p_modes = judged[judged["mode"].isin(P_MODES)]
    assert (p_modes["ratio"] <= bar).all(), p_modes.sort_values("ratio").tail(3).to_dict("records")
    # I and O modes: their successes correlate a little less (truncations), the median still meets it
    assert judged["ratio"].median() <= bar


def test_at_no_correlation_pairing_costs_at_most_five_percent(table):
    assert (table[table["rho"] == 0.0]["ratio"] <= 1.05).all()


def test_the_study_can_see_a_bad_paired_interval(simulated):
    # Claiming more correlation than there is (phi forced to 0.9) must break coverage at rho = 0.3:
    # the test above would notice an interval that overstates the pairing gain.
    frame, joint = simulated
    chosen = ((frame["rho"] == 0.3) & (frame["skill_a"] == 0.7) & (frame["skill_b"] == 0.76)).to_numpy()
    g = frame["guess"].to_numpy()[chosen]
    rows = joint[chosen]
    sums = (g * rows[:, :3].sum(axis=(1, 2)), g * rows[:, :, :3].sum(axis=(1, 2)), g * rows.sum(axis=(1, 2)))
    result = paired.compare_joint(rows, *sums, "C_P", with_p=False)
    overstated = paired.compare_joint(rows, *sums, "C_P", with_p=False, phi=0.9)
    low, high = overstated["paired_low"].to_numpy(), overstated["paired_high"].to_numpy()
    truth = 0.76 * (1 - frame["tau"].to_numpy()[chosen]) - 0.7 * (1 - frame["tau"].to_numpy()[chosen])
    assert ((low <= truth) & (truth <= high)).mean() < 0.85
    # ... while the real interval on the same replicates keeps its promise
    real = (result["paired_low"].to_numpy() <= truth + 1e-9) & (truth <= result["paired_high"].to_numpy() + 1e-9)
    assert real.mean() >= THRESHOLD


def test_unpaired_interval_overcovers_when_models_agree(table):
    # the unpaired interval ignores the correlation: at rho = 0.6 it is far wider than it needs to be
    assert table[table["rho"] == 0.6]["unpaired"].min() > 0.98
