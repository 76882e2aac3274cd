"""Archetype rules on hand-built radar numbers: each rule fires on its own example, in order,
and a shape (collapse, specialist) only on evidence: the intervals compared must be apart."""
import pandas as pd

from resolver.analysis import archetypes as A


def _profile(centers, truncated=None, tokens=None, samples=100, eval_id="e", margin=0.05):
    groups = [f"g{i}" for i in range(len(centers))]
    return pd.DataFrame({"eval_id": eval_id, "group": groups, "center": centers, "margin": margin,
                         "truncated_ratio": truncated or [0.0] * len(centers),
                         "tokens_mean": tokens or [1000.0] * len(centers), "samples": samples})


def _tiers(easy, hard, margin=0.05):
    return pd.DataFrame({"eval_id": "e", "tier": ["easy", "hard"], "tier_order": [0, 2], "center": [easy, hard],
                         "margin": margin})


def test_balanced_named_by_its_level():
    found = A.classify(_profile([0.60, 0.70, 0.65]))
    assert found.name == "balanced" and found.reason.startswith("mid-level all-round: mean .65")
    assert A.classify(_profile([0.10, 0.20, 0.15])).reason.startswith("weak all-round")
    assert A.classify(_profile([0.80, 0.90, 0.85])).reason.startswith("strong all-round")


def test_specialist_needs_a_spread_its_intervals_confirm():
    found = A.classify(_profile([0.90, 0.40, 0.50]))
    assert found.name == "specialist" and "g0 (.90)" in found.reason and "g1 (.40)" in found.reason
    # The same centers measured on a handful of samples (wide intervals) are no evidence of a specialty.
    assert A.classify(_profile([0.90, 0.40, 0.50], margin=0.3)).name == "balanced"
    assert A.classify(_profile([0.50, 0.75, 0.60])).name == "balanced"     # spread .25 < .30


def test_truncation_limited_by_average_and_by_worst_group():
    assert A.classify(_profile([0.6, 0.6, 0.6], truncated=[0.12, 0.10, 0.09])).name == "truncation-limited"
    assert A.classify(_profile([0.6, 0.6, 0.6], truncated=[0.30, 0.0, 0.0])).name == "truncation-limited"
    assert A.classify(_profile([0.6, 0.6, 0.6], truncated=[0.05, 0.05, 0.05])).name == "balanced"


def test_collapse_needs_good_easy_lost_hard_and_apart_intervals():
    profile = _profile([0.6, 0.65, 0.6])
    found = A.classify(profile, tiers=_tiers(0.90, 0.30))
    assert found.name == "collapse" and ".90 on easy" in found.reason and ".30 on hard" in found.reason
    assert A.classify(profile, tiers=_tiers(0.90, 0.50)).name == "balanced"   # keeps more than half
    assert A.classify(profile, tiers=_tiers(0.45, 0.10)).name == "balanced"   # never good on easy
    assert A.classify(profile, tiers=_tiers(0.90, 0.30, margin=0.35)).name == "balanced"   # intervals overlap


def _with_others(profile, tokens=1000.0, center=0.7):
    others = pd.concat([_profile([center, center], eval_id=f"o{i}", tokens=[tokens, tokens]) for i in range(4)])
    return pd.concat([others, profile])


def test_over_thinker_against_dataset_medians():
    slow = _profile([0.5, 0.6], tokens=[2500.0, 2500.0])
    found = A.classify(slow, _with_others(slow))
    assert found.name == "over-thinker" and "2.5x" in found.reason
    accurate_but_slow = _profile([0.9, 0.95], tokens=[3000.0, 3000.0])
    assert A.classify(accurate_but_slow, _with_others(accurate_but_slow)).name == "balanced"
    a_bit_slow = _profile([0.5, 0.6], tokens=[1500.0, 1500.0])
    assert A.classify(a_bit_slow, _with_others(a_bit_slow)).name == "balanced"


def test_four_times_the_tokens_for_less_is_an_over_thinker_even_when_it_truncates():
    loopy = _profile([0.3, 0.35], tokens=[4000.0, 4000.0], truncated=[0.3, 0.35])
    found = A.classify(loopy, _with_others(loopy), tiers=_tiers(0.9, 0.1))
    assert found.name == "over-thinker" and "4.0x" in found.reason and "token limit" in found.reason


def test_truncating_but_not_wasteful_is_truncation_limited_before_collapse():
    profile = _profile([0.8, 0.8], truncated=[0.3, 0.3], tokens=[1200.0, 1200.0])
    assert A.classify(profile, _with_others(profile), tiers=_tiers(0.9, 0.1)).name == "truncation-limited"
