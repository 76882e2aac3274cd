"""The loop detector on constructed answers: one example of every class, plus the
cases that catch naive detectors (counters, healthy text, partial loops)."""
from __future__ import annotations

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from resolver.probe import loops as loops
from resolver.probe.loops import detect_loop

HEALTHY = """To answer this, I will go through the table row by row and keep a running total.
First, the header tells us the columns are name, city, age and score.
Alice lives in Paris, she is thirty-one, and her score is the highest so far.
Bob is from Lisbon; his score is lower than Alice's, so the maximum does not change.
Carol comes next. Her city is Oslo and her age makes her the youngest person listed.
Dmitri from Kyiv has a score that ties with Alice, which matters for the tie-break rule.
The question asks for the person with the highest score, breaking ties by age.
Since Dmitri is older than Alice, the rule says the younger one wins, so Alice stays ahead.
Eve from Rome scores below everyone except Bob, so she does not affect the answer.
Frank in Berlin has a missing age field; the instructions say to skip incomplete rows.
Grace from Madrid scores just under Alice, close but not enough to overtake her.
Heidi in Vienna is the last row and her score is the second lowest of the table.
Let me double-check the tie-break by rereading the question statement carefully.
It says "if two people share the top score, report the younger one", which confirms it.
I also verify that no row was skipped apart from Frank, whose age is missing.
Counting the rows: eight people, seven complete, which matches what I processed above.
"""


def _healthy_long(lines: int = 120) -> str:
    names = ["Alice", "Bob", "Carol", "Dmitri", "Eve", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Karl"]
    things = ["apples", "bread", "cheese", "dates", "eggs", "figs", "grapes", "honey", "ink", "jam", "kale", "lemons", "milk"]
    verbs = ["bought", "sold", "returned", "ordered", "tasted", "packed", "counted"]
    out = [HEALTHY]
    for i in range(lines):
        out.append(f"{names[i % 11]} {verbs[i % 7]} {3 + i % 5} {things[i % 13]} for {(i * 37) % 90 + 10} cents in week {i // 7 + 1}.\n")
    out.append("| item | count | price |\n|---|---|---|\n")
    out.extend(f"| {7 * i} | {i + 2} | {i * 3 + 1} |\n" for i in range(30))
    out.append("So the total spent across all weeks is obtained by adding the cents column, which I do next in pairs")
    return "".join(out)


def test_healthy_long_reasoning_is_not_flagged():
    for text in (HEALTHY, _healthy_long()):
        report = detect_loop(text)
        assert report.classification is None, report
        assert report.coverage == 0.0 and not report.severe


def test_static_loop_is_detected_with_high_coverage():
    text = HEALTHY[:200] + "\n" + "Let me re-check the second column of the table once more.\n" * 60
    report = detect_loop(text)
    assert report.classification == "1-LOOP-STATIC"
    assert report.period == 1
    assert report.repeats >= 59
    assert abs(report.delta_tokens) < 0.01
    assert report.coverage > 0.9 and report.severe
    assert report.start_token > 0


def test_growing_loop_of_lengthening_lists():
    lines = [f"So far the list is {', '.join(str(j) for j in range(1, k + 1))} and I keep adding items.\n"
             for k in range(3, 40)]
    report = detect_loop(HEALTHY + "".join(lines))
    assert report.classification == "1-LOOP-GROWING"
    assert report.delta_tokens == pytest.approx(2.0, abs=0.3)  # ", k" = two tokens per repeat


def test_counter_loop_is_growing_not_static():
    lines = [f"Step {k}: check the remaining candidates again before answering.\n" for k in range(5, 60)]
    report = detect_loop(HEALTHY + "".join(lines))
    assert report.classification == "1-LOOP-GROWING"
    assert report.coverage > 0.6


def test_same_sentence_with_unordered_numbers_is_static_not_counter():
    values = [7, 3, 9, 1, 8, 2, 6, 4, 5, 0] * 4
    lines = [f"Maybe the answer is {v}, let me verify that guess again.\n" for v in values]
    assert detect_loop(HEALTHY + "".join(lines)).classification == "1-LOOP-STATIC"


def test_shrinking_loop():
    lines = [f"The candidates left to try are {', '.join(str(j) for j in range(k, 0, -1))} so I continue.\n"
             for k in range(45, 8, -1)]
    report = detect_loop(HEALTHY + "".join(lines))
    assert report.classification == "1-LOOP-SHRINKING"
    assert report.delta_tokens < -1.5


def test_two_state_oscillation():
    unit = "Wait, maybe the answer is (B) because of the second clue.\nNo, the first clue rules that out, so reconsider.\n"
    report = detect_loop(HEALTHY + unit * 25)
    assert report.classification == "2-LOOP-STATIC"
    assert report.period == 2 and report.repeats >= 24


def test_three_phase_template_loop():
    unit = ("Let me restate the problem in my own words.\n"
            "Now I compute the value for each option in turn.\n"
            "Hmm, I am not sure this is right, let me start over.\n")
    report = detect_loop(HEALTHY + unit * 20)
    assert report.classification == "3-LOOP-STATIC"
    assert report.period == 3 and report.repeats >= 19


@pytest.mark.parametrize("junk, unit", [("!" * 3000, 1), ("the " * 800, 4), ("ab" * 1500, 2)])
def test_character_collapse_is_degenerate(junk, unit):
    report = detect_loop(HEALTHY + "Therefore the answer is " + junk)
    assert report.classification == "DEGENERATE"
    assert report.coverage > 0.3
    assert report.period == unit


def test_loop_only_in_last_third_has_coverage_about_one_third():
    head = _healthy_long(200)
    loop_line = "I should verify the running total one more time before I finish.\n"
    head_tokens = detect_loop(head).total_tokens
    line_tokens = detect_loop(loop_line * 5).total_tokens / 5
    repeats = round(head_tokens / 2 / line_tokens)  # loop tokens = half the head = a third of all
    report = detect_loop(head + "\n" + loop_line * repeats)
    assert report.classification == "1-LOOP-STATIC"
    assert report.coverage == pytest.approx(1 / 3, abs=0.03)
    assert report.start_fraction == pytest.approx(2 / 3, abs=0.03)
    assert not report.severe


def test_a_varied_line_inside_the_loop_does_not_break_it():
    loop = ["I will recount the rows of the table to be completely sure.\n"] * 30
    loop[15] = "Actually I already did that, but once more cannot hurt at all.\n"
    report = detect_loop(HEALTHY + "".join(loop))
    assert report.classification == "1-LOOP-STATIC"
    assert report.repeats >= 29


def test_three_repeats_are_not_a_loop():
    text = HEALTHY + "Let me check again.\n" * (loops.MIN_REPEATS - 1) + "Done, the answer is Alice."
    assert detect_loop(text).classification is None


def test_empty_and_missing_text():
    assert detect_loop(None).classification is None
    assert detect_loop("   \n").classification is None


def test_uses_the_given_tokenizer():
    words = sorted(set("let me re check the second column of table once more . - [UNK]".split()))
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    text = "let me re-check the second column of the table once more.\n" * 10
    report = detect_loop(text, tokenizer=tok)
    assert report.classification == "1-LOOP-STATIC"
    # the whitespace pre-tokenizer splits "re-check" into 3 and "more." into 2: 14 per line
    assert report.total_tokens == 140


def test_class_distribution_counts_every_class():
    reports = [detect_loop("x"), detect_loop(HEALTHY + "Same line again and again here.\n" * 20)]
    dist = loops.class_distribution(reports)
    assert list(dist) == [*loops.CLASSES, "none"]
    assert dist["none"] == 1 and dist["1-LOOP-STATIC"] == 1 and sum(dist.values()) == 2


def test_repeated_paragraph_is_a_one_loop_of_the_block():
    paragraph = ("Wait, I need to double-check the sum of the score column.\n"
                 "Going back to the table, the first row has a score of 12.\n"
                 "The second row has 40, and the third row is missing a value.\n"
                 "Since the instructions say to skip incomplete rows, I skip it.\n"
                 "So the partial sum is 52, but I am not fully certain yet.\n\n")
    report = detect_loop(HEALTHY + paragraph * 12)
    assert report.classification == "1-LOOP-STATIC"
    assert report.period == 5          # five lines; the blank line sticks to the fifth
    assert report.repeats == 12
    # everything after the healthy opening is loop
    healthy_share = detect_loop(HEALTHY).total_tokens / report.total_tokens
    assert report.coverage == pytest.approx(1 - healthy_share, abs=0.02)


def test_paragraph_that_grows_each_time_is_growing():
    parts = []
    for k in range(3, 15):
        rows = ", ".join(f"row {j}" for j in range(1, k + 1))
        parts.append(f"Let me recount the rows once more.\nI have counted {rows} so far.\n"
                     "That is still not all of them, so I continue counting.\n"
                     "Counting carefully matters because the table is long.\n"
                     "Once I have them all I can answer the question.\n\n")
    report = detect_loop(HEALTHY + "".join(parts))
    assert report.classification == "1-LOOP-GROWING"
    assert report.period == 5 and report.delta_tokens > 1


def test_phrase_loop_inside_one_line_is_static():
    text = HEALTHY + "So the answer is 5 and then we check again and " * 150
    report = detect_loop(text)
    assert report.classification == "1-LOOP-STATIC"
    assert report.coverage > 0.8


def _recheck_block(rows: int, count: int) -> str:
    lines = ["Looking at the table:\n"]
    for i in range(rows):
        age = 20 + (i * 7) % 30
        verdict = "greater than 30" if age > 30 else "not greater than 30"
        lines.append(f"- {['alice', 'bruno', 'chen', 'dara', 'emeka'][i % 5]} row {i + 1}: age {age}, {verdict}\n")
    lines.append(f"So the count is {count}.\n\nWait, let me re-examine the table to make sure I didn't miss anything.\n\n")
    return "".join(lines)


def test_realistic_re_examination_loop_with_long_blocks():
    # a small model re-reading a 20-row table again and again, the count drifting
    text = ("To solve this, I count the rows where the age is greater than 30.\n\n"
            + "".join(_recheck_block(20, 9 + k % 2) for k in range(6)) + _recheck_block(20, 9)[:400])
    report = detect_loop(text)
    assert report.classification == "1-LOOP-STATIC"
    assert report.period == 23 and report.repeats >= 5
    assert report.coverage > 0.9


def test_sampled_loop_with_varied_sentences_is_still_found():
    # temperature sampling: three repeats in five of a 6-sentence paragraph reword a sentence
    import random

    rng = random.Random(5)
    base = ["Wait, the second row might have been skipped in my count.",
            "Let me go back to the table and read it again from the top.",
            "The header says name, city, age and score, in that order.",
            "Row one is alice from oslo, and row two is bruno from lima.",
            "If I add their scores I get the same partial sum as before.",
            "So nothing was skipped, but I should make sure once more."]
    fillers = ["Hmm, maybe I misread a value somewhere along the way.", "Actually the order of columns is irrelevant.",
               "I keep getting the same number, which is reassuring.", "Perhaps the question wants something else."]
    parts = []
    for k in range(15):
        block = list(base)
        if k % 5 in (0, 2, 3):
            block[rng.randrange(len(block))] = rng.choice(fillers)
        parts.append(" ".join(block) + "\n\n")
    report = detect_loop(HEALTHY + "".join(parts))
    assert report.classification == "1-LOOP-STATIC"
    assert report.period == 6 and report.coverage > 0.7


def test_one_word_repeated_with_separators_is_degenerate():
    # a list that collapses into one word forever, "; "-separated on one line
    text = "Categories found: Action; Drama; Comedy; " + "Other; " * 600
    report = detect_loop(text)
    assert report.classification == "DEGENERATE"
    assert report.period == len("Other; ") and report.coverage > 0.9


def test_run_on_sentence_repeated_on_one_line_is_static():
    sentence = "I have been practising the lift for a few weeks now and I have been practising it daily. "
    text = "How should I train for the lift?\n\n" + sentence * 40
    report = detect_loop(text)
    assert report.classification == "1-LOOP-STATIC"
    assert report.coverage > 0.9


def test_blank_lines_between_states_do_not_inflate_the_period():
    # an agent-style stall: three short lines, each followed by a blank line
    report = detect_loop(HEALTHY + "Go.\n\nOk.\n\nI'll output the result now.\n\n" * 30)
    assert report.classification == "3-LOOP-STATIC" and report.period == 3
    two = detect_loop(HEALTHY + "Maybe it is (B).\n\nNo, it cannot be (B) after all.\n\n" * 30)
    assert two.classification == "2-LOOP-STATIC" and two.period == 2


def test_cjk_sentences_without_spaces_are_segmented():
    sentence = "我需要再检查一遍表格中的第二列。"
    text = "首先读取表格并计算总和，然后给出答案。" * 3 + "\n" + sentence * 60
    report = detect_loop(text)
    assert report.classification == "1-LOOP-STATIC"
    assert report.coverage > 0.8
