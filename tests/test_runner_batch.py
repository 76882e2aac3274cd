"""Batch mode: the vLLM run-batch file formats, and write-batch -> "vLLM" -> read-batch rounds.

A small harness plays `vllm run-batch`: it answers every input line by sending its
body to the simulator and writes vLLM's output format (the current response.body
wrapper and the older bare shape), plus error lines, a non-200 status, blank
lines and an id that belongs to no request.
"""
from __future__ import annotations

import json
import urllib.request
import uuid

import pytest

from resolver.batch import batch_line, read_batch_output, write_batch_file
from resolver.cache import request_key
from resolver.errors import UserError

from runner_support import TINY, comparable, read_folder, run_folders, runner_args, simulator

pytestmark = pytest.mark.filterwarnings("ignore")
INPUT_KEYS = {"custom_id", "method", "url", "body"}


def completion(content, finish="stop"):
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": finish}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}}


def wrapped(custom_id, body, status=200):
    return {"id": f"vllm-{uuid.uuid4().hex}", "custom_id": custom_id,
            "response": {"status_code": status, "request_id": f"vllm-batch-{uuid.uuid4().hex}", "body": body},
            "error": None}


def test_input_lines_follow_vllms_format(tmp_path):
    body = {"model": "m", "messages": [{"role": "user", "content": "q"}], "max_tokens": 5,
            "stream": True, "stream_options": {"include_usage": True}}
    line = batch_line("abc", body)
    assert set(line) == INPUT_KEYS and line["method"] == "POST" and line["url"] == "/v1/chat/completions"
    assert "stream" not in line["body"] and "stream_options" not in line["body"]
    n = write_batch_file(tmp_path / "b.ndjson", [("abc", body), ("abc", body), ("def", {**body, "max_tokens": 6})])
    lines = (tmp_path / "b.ndjson").read_text().splitlines()
    assert n == 2 == len(lines) and [json.loads(l)["custom_id"] for l in lines] == ["abc", "def"]


def test_output_lines_in_every_shape(tmp_path):
    lines = [
        wrapped("new", completion("Final Answer: 1")),
        {"id": "vllm-2", "custom_id": "old", "response": completion("Final Answer: 2", "length"), "error": None},
        {"id": "vllm-3", "custom_id": "err", "response": None, "error": "prompt too long"},
        wrapped("bad-status", {"object": "error", "message": "model not found"}, status=404),
        wrapped("no-choices", {"object": "chat.completion", "choices": []}),
        wrapped("new", completion("Final Answer: again")),
    ]
    text = "\n".join(json.dumps(l) for l in lines[:3]) + "\n\n{not json\n" + "\n".join(json.dumps(l) for l in lines[3:]) + "\n"
    (tmp_path / "out.ndjson").write_text(text)
    out = read_batch_output(tmp_path / "out.ndjson")
    assert out.lines == 7 and set(out.answers) == {"new", "old"}
    assert out.answers["new"].content == "Final Answer: 1"        # the first answer is kept
    assert (out.answers["old"].content, out.answers["old"].finish_reason) == ("Final Answer: 2", "length")
    assert out.answers["old"].usage["total_tokens"] == 8
    problems = "\n".join(out.problems)
    for expected in ("line 3 (err): error: prompt too long", "line 5: not valid JSON", "status 404",
                     "model not found", "no-choices", "duplicate custom_id"):
        assert expected in problems
    with pytest.raises(UserError, match="--batch"):
        read_batch_output(tmp_path / "missing.ndjson")


def play_vllm(batch_file, url, out_file, *, errors=0, unknown=False):
    """Answer a run-batch input file through the simulator, in vLLM's output format."""
    out = []
    for n, line in enumerate(batch_file.read_text().splitlines()):
        request = json.loads(line)
        assert set(request) == INPUT_KEYS and request["custom_id"] == request_key(request["body"])
        if n < errors:
            if n % 2:
                out.append({"id": f"vllm-{n}", "custom_id": request["custom_id"], "response": None,
                            "error": "CUDA out of memory"})
            else:
                out.append(wrapped(request["custom_id"], {"object": "error", "message": "overloaded"}, 503))
            continue
        req = urllib.request.Request(f"{url}/v1/chat/completions", data=json.dumps(request["body"]).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            body = json.loads(resp.read())
        # Every third answer in the older bare shape.
        out.append({"id": f"vllm-{n}", "custom_id": request["custom_id"], "response": body, "error": None}
                   if n % 3 == 0 else wrapped(request["custom_id"], body))
    if unknown:
        out.append(wrapped("0" * 64, completion("Final Answer: 9")))
    out_file.write_text("\n".join(json.dumps(o) for o in out) + "\n\n")
    return len(out)


def batch_args(tmp_path):
    """The api-mode arguments without --apibase (batch modes need no server)."""
    args = runner_args("unused", tmp_path)
    at = args.index("--apibase")
    return args[:at] + args[at + 2:]


def _runner(*args):
    from conftest import run_script
    return run_script("runner.py", *args)


def test_write_batch_read_batch_rounds_match_an_api_run(tmp_path):
    with simulator(TINY) as sim:
        api = _runner(*runner_args(sim.url, tmp_path / "api"))
        assert api.returncode == 0, api.stderr
        reference = read_folder(run_folders(tmp_path / "api" / "results")[0])
        base = batch_args(tmp_path)
        batches = []
        for attempt in range(6):
            wrote = _runner(*base, "--mode", "write-batch")
            assert wrote.returncode == 0, wrote.stderr
            if "nothing to write" in wrote.stdout:
                break
            batch = sorted((tmp_path / "results").glob("*-offline.ndjson"))[-1]
            assert batch not in batches and batch.name.endswith("_tiny_sim-mid_zerocot-nosys_greedy-2k-offline.ndjson")
            batches.append(batch)
            for line in batch.read_text().splitlines():       # checked line by line
                request = json.loads(line)
                assert request["body"]["model"] == "sim-mid" and request["body"]["max_tokens"] == 2048
                assert all(set(m) == {"role", "content"} for m in request["body"]["messages"])
            out = tmp_path / f"out{attempt}.ndjson"
            play_vllm(batch, sim.url, out, errors=3 if attempt == 0 else 0, unknown=attempt == 0)
            read = _runner(*base, "--mode", "read-batch", "--batch", out)
            assert read.returncode == 0, read.stderr
            if attempt == 0:
                assert "CUDA out of memory" in read.stderr and "status 503" in read.stderr
                assert "1 answers have a custom_id that is not a request of this experiment" in read.stderr
                assert "steps still need rounds" in read.stdout
        else:
            pytest.fail("batch rounds never completed")
        assert len(batches) >= 2                                 # adaptive: a second round was needed
        assert "all steps complete" in read.stdout
    final = read_folder(max(p for p in run_folders(tmp_path / "results")))
    assert comparable(final) == comparable(reference)


def test_read_batch_needs_its_file(tmp_path):
    base = batch_args(tmp_path)
    missing = _runner(*base, "--mode", "read-batch", "--batch", tmp_path / "nope.ndjson")
    assert missing.returncode == 2 and "does not exist" in missing.stderr and "Traceback" not in missing.stderr
