"""Authoring aid for closings.jsonl: list and bracket answers in LaTeX closings.

Grader 2's last misses on labelled answers were lists boxed one item per line
(`Final Answer: $\\boxed{carpet` newline `house ...}$`, the box inside `\\[ \\]`,
`The answer is \\boxed{...}`) and bracket answers wrapped in `\\( ... \\)`. This set
writes those closings for every list-like task (sort: `list`; sequence: `numbers`) and
the bracket-like one (brackets), each labelled by hand, next to near-misses that must
stay wrong or invalid: a box holding the wrong list, an item missing, two boxes that
disagree, a hedge, a box with no marker in prose. Same label policies as the other
sets (docs/grading.md). Re-run: `python tests/grading_corpus/closings_build.py`.
"""
from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
C, W, I = "correct", "wrong", "invalid"
T = "<think>\nLet me sort this out step by step.\n</think>\n\n"


def lines(*items: str) -> str:
    return "\n".join(items)


def breaks(*items: str) -> str:
    """Items separated by LaTeX line breaks (`\\\\`) as well as newlines."""
    return " \\\\\n".join(items)


SORT = ("father", "flag", "frame", "quizzical", "sand", "spaghetti")          # case `sort`
SORT_SWAPPED = ("father", "frame", "flag", "quizzical", "sand", "spaghetti")
SORT_SHORT = ("father", "flag", "frame", "quizzical", "sand")
FRESH3 = ("cave", "chicken", "child", "flag", "giant", "iceberg", "silk", "submarine")   # `fresh3-sort`
MUTATED = ("banana", "chain", "finger", "queRy", "stream")                     # `sort-mutated`

CLOSINGS = [
    # ---- sort: one box spread over lines
    ("sort", T + "Final Answer: $\\boxed{" + lines(*SORT) + "}$", C),
    ("sort", T + "**Final Answer**\n\\[\n\\boxed{" + lines(*SORT) + "}\n\\]", C),
    ("sort", T + "The answer is \\boxed{" + lines(*SORT) + "}", C),
    ("sort", "The answer is $\\boxed{\n" + lines(*SORT) + "\n}$", C),
    ("sort", T + "Final Answer:\n\\[\n\\boxed{" + breaks(*SORT) + "}\n\\]", C),
    ("sort", T + "### Final Answer\n$$\n\\boxed{\n" + lines(*SORT) + "\n}\n$$", C),
    ("sort", T + "Final Answer: The sorted words are $\\boxed{" + lines(*SORT) + "}$", C),
    ("sort", {"reasoning_content": "sorting...", "content": "Final Answer:\n$\\boxed{" + lines(*SORT) + "}$"}, C),
    ("sort", T + "Final Answer: \\boxed{" + lines(*SORT) + "}\n\nSo the list is \\boxed{" + lines(*SORT) + "}", C),
    ("sort", T + "Final Answer: $\\boxed{" + lines(*SORT_SWAPPED) + "}$", W),
    ("sort", T + "**Final Answer**\n\\[\n\\boxed{" + lines(*SORT_SHORT) + "}\n\\]", W),
    ("sort", T + "The answer is \\boxed{" + lines(*reversed(SORT)) + "}", W),
    ("sort", T + "Final Answer: $\\boxed{" + lines(*SORT) + "}$ or $\\boxed{" + lines(*SORT_SWAPPED) + "}$", I),
    ("sort", T + "Final Answer: \\boxed{" + lines(*SORT) + "}\n\nOr perhaps: \\boxed{" + lines(*SORT_SWAPPED) + "}", I),
    ("sort", T + "Final Answer: $\\boxed{\\text{followed by the sorted words, one per line}}$", I),
    ("fresh3-sort", T + "Final Answer: $\\boxed{" + lines(*FRESH3) + "}$", C),
    ("fresh3-sort", T + "**Final Answer**\n\\[\n\\boxed{" + breaks(*FRESH3) + "}\n\\]", C),
    ("fresh3-sort", T + "The answer is \\boxed{" + lines(*("\\text{" + w + "}" for w in FRESH3)) + "}", C),
    ("fresh3-sort", T + "Final Answer: $\\boxed{" + lines(*FRESH3[1:], FRESH3[0]) + "}$", W),
    ("sort-mutated", T + "Final Answer: $\\boxed{" + lines(*MUTATED) + "}$", C),
    ("sort-mutated", T + "The answer is $\\boxed{" + lines(*(w.lower() for w in MUTATED)) + "}$", C),
    ("sort-mutated", T + "**Final Answer**\n\\[\n\\boxed{" + lines("banana", "chain", "finger", "stream", "queRy") + "}\n\\]", W),
    # ---- sequence (numbers): target 9, 17, 0, 8, 16 / 32, 34, 38, 40, 44
    ("sequence", T + "Final Answer: $\\boxed{9,\n17,\n0,\n8,\n16}$", C),
    ("sequence", T + "**Final Answer**\n\\[\n\\boxed{" + lines("9", "17", "0", "8", "16") + "}\n\\]", C),
    ("sequence", T + "The answer is \\boxed{" + lines("9", "17", "0", "8", "16") + "}", C),
    ("sequence", T + "Final Answer:\n\\[\n\\boxed{" + breaks("9", "17", "0", "8", "16") + "}\n\\]", C),
    ("sequence", T + "Final Answer: $\\boxed{" + lines("9", "17", "25", "8", "16") + "}$", W),
    ("sequence", T + "The answer is \\boxed{" + lines("9", "17", "0", "8") + "}", W),
    ("sequence", T + "Final Answer: $\\boxed{" + lines("9", "17", "0", "8", "16 or 24") + "}$", I),
    ("sequence", T + "Final Answer: \\boxed{" + lines("9", "17", "0", "8", "16") + "} or \\boxed{"
     + lines("9", "17", "25", "8", "16") + "}", I),
    ("fresh3-sequence", T + "Final Answer: $\\boxed{" + lines("32", "34", "38", "40", "44") + "}$", C),
    ("fresh3-sequence", T + "**Final Answer**\n\\[\n\\boxed{32,\n34,\n38,\n40,\n44}\n\\]", C),
    ("fresh3-sequence", T + "The answer is \\boxed{" + lines("32", "34", "36", "40", "44") + "}", W),
    # ---- brackets: target ) > ] / ) > } ] / ] }
    ("brackets-mixed", T + "Final Answer: \\( ) > ] \\)", C),
    ("brackets-mixed", T + "Final Answer: \\() > ]\\)", C),
    ("brackets-mixed", T + "**Final Answer:** \\( ) > ] \\).", C),
    ("brackets-mixed", T + "Final Answer:\n\\( ) > ] \\)", C),
    ("brackets-mixed", T + "Final Answer:\n\\(\n) > ]\n\\)", C),
    ("brackets-mixed", T + "### Final Answer\n\\( ) > ] \\) (closing the open brackets)", C),
    ("brackets-mixed", T + "Final Answer: \\( \\boxed{) > ]} \\)", C),
    ("brackets-mixed", T + "Final Answer: \\( ] > ) \\)", W),
    ("brackets-mixed", T + "Final Answer: \\( ) > \\)", W),
    ("brackets-mixed", T + "Final Answer: \\( ) > ] \\) or \\( ) ] > \\)", I),
    ("brackets-mixed", T + "The closing sequence is \\( ) > ] \\)", I),
    ("brackets-mixed", T + "Final Answer: \\(followed by the closing brackets, separated by spaces\\)", I),
    ("brackets-angle", T + "Final Answer: \\( ) > \\} ] \\)", C),
    ("brackets-angle", T + "Final Answer: \\( ) \\rangle \\} ] \\)", C),
    ("brackets-angle", T + "Final Answer: \\( ) > ] \\} \\)", W),
    ("fresh-brackets", T + "**Final Answer**: \\( ] \\} \\)", C),
    ("fresh-brackets", T + "Final Answer: \\(] }\\)", C),
    ("fresh-brackets", T + "Final Answer: \\( } ] \\)", W),
]


if __name__ == "__main__":
    with open(HERE / "closings.jsonl", "w", encoding="utf-8") as out:
        for n, (key, content, label) in enumerate(CLOSINGS):
            message = content if isinstance(content, dict) else {"content": content}
            row = {"id": f"m{n:04d}", "case": key, "style": "closings", "message": message,
                   "finish_reason": "stop", "label": label, "why": "list and bracket answers in LaTeX closings"}
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(len(CLOSINGS), "answers")
