"""Cross-check against another component's ground truth: the built-in simulator writes
loops of a *named* kind after some templated reasoning (resolver.sim.profiles, written
by the simulator's author from the same class definitions). The detector must name
every one of them, with the loop covering the part after the reasoning."""
from __future__ import annotations

import random

import pytest

from resolver.probe.loops import detect_loop
from resolver.sim.profiles import LOOP_KINDS, loop_text, reasoning_prose, sentence_pool

pytestmark = pytest.mark.slow

WORDS = ["the value", "the item", "the list", "row four", "the total", "column two"]


@pytest.mark.parametrize("kind", LOOP_KINDS)
def test_detector_names_the_simulated_loop_kind(kind):
    pool = sentence_pool(WORDS)
    for seed in range(8):
        rng = random.Random(seed)
        lead, _, _ = reasoning_prose(rng, pool, rng.choice([100, 300, 600]))
        loop = loop_text(kind, rng, WORDS, rng.choice([800, 2000, 4000]))
        report = detect_loop(lead + "\n" + loop)
        assert report.classification == kind, (seed, report)
        lead_share = detect_loop(lead).total_tokens / report.total_tokens
        # the loop starts where the reasoning ends (within a couple of lines)
        assert report.start_fraction == pytest.approx(lead_share, abs=0.05), (seed, report)


def test_simulated_healthy_reasoning_is_not_a_loop():
    pool = sentence_pool(WORDS)
    for seed in range(8):
        rng = random.Random(seed)
        lead, _, _ = reasoning_prose(rng, pool, 1500)
        assert detect_loop(lead).classification is None, seed
