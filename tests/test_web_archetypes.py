"""Archetype rules on hand-built radar numbers: each rule fires on its own example, in order."""
import pandas as pd

from resolver.web import archetypes as A


def _profile(centers, truncated=None, tokens=None, samples=100, eval_id="e"):
    groups = [f"g{i}" for i in range(len(centers))]
    return pd.DataFrame({"eval_id": eval_id, "group": groups, "center": centers,
                         "truncated_ratio": truncated or [0.0] * len(centers),
                         "tokens_mean": tokens or [1000.0] * len(centers), "samples": samples})


def _tiers(easy, hard):
    return pd.DataFrame({"eval_id": "e", "tier": ["easy", "hard"], "tier_order": [0, 2], "center": [easy, hard]})


def test_balanced_and_its_qualifiers():
    assert A.classify(_profile([0.60, 0.70, 0.65])).name == "balanced"
    assert "uniformly weak" in A.classify(_profile([0.10, 0.20, 0.15])).reason
    assert "uniformly strong" in A.classify(_profile([0.80, 0.90, 0.85])).reason


def test_specialist_names_best_and_worst_group():
    found = A.classify(_profile([0.90, 0.40, 0.50]))
    assert found.name == "specialist" and "g0 (.90)" in found.reason and "g1 (.40)" in found.reason


def test_uneven_between_the_limits():
    assert A.classify(_profile([0.50, 0.75, 0.60])).name == "uneven"     # spread .25


def test_truncation_limited_by_average_and_by_worst_group():
    assert A.classify(_profile([0.6, 0.6, 0.6], truncated=[0.12, 0.10, 0.09])).name == "truncation-limited"
    assert A.classify(_profile([0.6, 0.6, 0.6], truncated=[0.30, 0.0, 0.0])).name == "truncation-limited"
    assert A.classify(_profile([0.6, 0.6, 0.6], truncated=[0.05, 0.05, 0.05])).name == "balanced"


def test_collapse_needs_good_easy_and_lost_hard():
    profile = _profile([0.6, 0.65, 0.6])
    found = A.classify(profile, tiers=_tiers(0.90, 0.30))
    assert found.name == "collapse" and ".90 on easy" in found.reason and ".30 on hard" in found.reason
    assert A.classify(profile, tiers=_tiers(0.90, 0.50)).name == "balanced"   # keeps more than half
    assert A.classify(profile, tiers=_tiers(0.50, 0.10)).name == "balanced"   # never good on easy


def test_over_thinker_against_dataset_medians():
    others = pd.concat([_profile([0.7, 0.7], eval_id=f"o{i}", tokens=[1000.0, 1000.0]) for i in range(4)])
    slow = _profile([0.5, 0.6], tokens=[3000.0, 3000.0])
    found = A.classify(slow, pd.concat([others, slow]))
    assert found.name == "over-thinker" and "3.0x" in found.reason
    accurate_but_slow = _profile([0.9, 0.95], tokens=[3000.0, 3000.0])
    assert A.classify(accurate_but_slow, pd.concat([others, accurate_but_slow])).name == "balanced"


def test_rule_order_truncation_before_collapse():
    profile = _profile([0.6, 0.6], truncated=[0.3, 0.3])
    assert A.classify(profile, tiers=_tiers(0.9, 0.1)).name == "truncation-limited"
