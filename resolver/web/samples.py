"""The explorer's sample viewer: every answered sample of a point with its prompt, reasoning and answer.

Samples are read from the run's NDJSON through resolver.ingest.raw_records (the same reading as
`probe.py failure`); this module only splits each record into what a reader wants to see
and renders one sample at a time.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from dash import html

from resolver.ingest import load_points, outcome_name, point_records, sample_index
from resolver.web.ids import EX

if TYPE_CHECKING:
    from collections.abc import Iterable

    from resolver.pointsdb import PointsDB

_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.DOTALL)


def prompt_text(record: dict) -> str:
    """The prompt as sent: the chat messages (role-labelled when there are several), else `input`."""
    messages = record.get("messages")
    if isinstance(messages, list) and messages:
        parts = []
        for message in messages:
            if not isinstance(message, dict):
                continue
            content = message.get("content")
            if isinstance(content, list):
                content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            parts.append(f"[{message.get('role', '?')}]\n{content}" if len(messages) > 1 else str(content))
        return "\n\n".join(parts)
    return str(record.get("input") or "")


def split_reasoning(record: dict) -> tuple[str, str]:
    """(reasoning, answer): a separate reasoning field, else the <think> block of the answer."""
    raw = record.get("answer")
    answer = raw if isinstance(raw, str) else ""
    reasoning = record.get("reasoning") or record.get("reasoning_content") or ""
    if not reasoning and "<think>" in answer:
        found = _THINK.search(answer)
        reasoning = found.group(1).strip() if found else ""
        answer = (answer[:found.start()] + answer[found.end():]).strip() if found else answer
    return str(reasoning), answer


def point_samples(db: PointsDB, point_ids: Iterable[int]) -> list:
    """Every answered sample of the points, in point then sample order."""
    out = []
    for _, point in load_points(db, point_ids).iterrows():
        for record in point_records(point, db.path.parent):
            reasoning, answer = split_reasoning(record)
            usage = record.get("usage") or {}
            out.append({"point_id": int(point["id"]), "key": record.get("key"), "index": sample_index(record),
                        "outcome": outcome_name(record), "target": record.get("target"),
                        "extracted": record.get("extracted_answer"), "prompt": prompt_text(record),
                        "reasoning": reasoning, "answer": answer,
                        "completion_tokens": usage.get("completion_tokens")})
    return out


def render_sample(sample: dict, position: int, total: int) -> html.Div:
    """One sample: a header line, the prompt, the reasoning and the answer (the page scrolls the answer's
    box to its end, where the final answer is)."""
    head = (f"sample {position + 1} of {total} · {sample['key']} · {sample['outcome']} · expected "
            f"{sample['target']!r} · extracted {sample['extracted']!r}"
            + (f" · {sample['completion_tokens']} tokens" if sample.get("completion_tokens") is not None else ""))
    boxes = [html.Div(head, className="rs-note", id=EX.SAMPLE_HEAD)]
    for title, text, ident in (("prompt", sample["prompt"], EX.SAMPLE_PROMPT),
                               ("reasoning", sample["reasoning"], EX.SAMPLE_REASONING),
                               ("answer", sample["answer"] or "(no answer: cut off by the token limit)",
                                EX.SAMPLE_ANSWER)):
        if title == "reasoning" and not text:
            continue
        boxes.append(html.Div([html.H6(title), html.Pre(text, className="rs-sample-long", id=ident)],
                              className="rs-sample-box"))
    return html.Div(boxes, className="ex-sample", **{"data-outcome": sample["outcome"]})
