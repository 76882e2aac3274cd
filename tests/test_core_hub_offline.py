"""Offline fallbacks (docs/decisions.md): with the hub unreachable, a tokenizer or model-card lookup
makes one short request and falls back to local files instead of the hub client's
minute of retries; not-found files name what exists."""
from __future__ import annotations

import socket

import pytest

from resolver.core.errors import UserError


@pytest.fixture
def dead_hub(monkeypatch):
    """The hub endpoint is a loopback port nothing listens on (connection refused at once)."""
    import huggingface_hub.constants as constants

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    return port


def test_tokenizer_lookup_never_tries_the_hub_when_it_is_down(dead_hub, monkeypatch):
    from transformers import AutoTokenizer

    from resolver.config.hf_tokenizers import hub_unreachable, load_hf_tokenizer

    calls = []

    def fake_from_pretrained(name, local_files_only=False, **kw):
        calls.append(local_files_only)
        raise OSError("not in the local cache")

    monkeypatch.setattr(AutoTokenizer, "from_pretrained", fake_from_pretrained)
    assert hub_unreachable("org/model") == "ConnectionError"
    with pytest.raises(UserError, match="hub is unreachable"):
        load_hf_tokenizer("org/model")
    assert calls == [True]          # the local cache only; no download attempt with its retries


def test_cohort_context_counter_falls_back_to_usage(dead_hub, monkeypatch):
    from transformers import AutoTokenizer

    from resolver.catalog.cohort_context import UsageCounter, load_counter

    monkeypatch.setattr(AutoTokenizer, "from_pretrained",
                        lambda name, local_files_only=False, **kw: (_ for _ in ()).throw(OSError("no cache")))
    notes: list = []
    assert isinstance(load_counter(None, "Qwen/Qwen3-8B", notes.append), UsageCounter)
    assert len(notes) == 1 and "cutting proportionally by characters" in notes[0]


def test_modelinfo_uses_a_filled_folder_when_the_hub_is_down(dead_hub, tmp_path, monkeypatch):
    import huggingface_hub

    from resolver.analysis.modelinfo import fetch_model_files, model_folder

    monkeypatch.setattr(huggingface_hub, "snapshot_download",
                        lambda **kw: pytest.fail("no download may be attempted with the hub down"))
    assert fetch_model_files("org/empty", tmp_path)[0] is None
    folder = model_folder(tmp_path, "org/cached")
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    assert fetch_model_files("org/cached", tmp_path) == (folder, None)


@pytest.mark.parametrize("loader,path,expected", [
    ("sampler", "samplers/greedymax.json", ("did you mean samplers/greedy-max.json", "samplers/greedy-4k.json")),
    ("template", "templates/zero-shot.json", ("templates/zeroshot.json", "templates/multishot-cot.json")),
    ("config", "configs/r13.yaml", ("did you mean configs/r12.yaml", "configs/tiny.yaml")),
])
def test_not_found_lists_what_exists(repo, monkeypatch, loader, path, expected):
    from resolver.config.loader import load_config
    from resolver.config.prompts import load_sampler, load_template

    monkeypatch.chdir(repo)
    load = {"sampler": load_sampler, "template": load_template, "config": load_config}[loader]
    with pytest.raises(UserError) as info:
        load(path)
    message = str(info.value)
    assert f"{loader} file '{path}' not found" in message and "\n" not in message
    assert all(fragment in message for fragment in expected)


def test_shipped_r12_configs_are_the_simulated_study(repo):
    """data/r12*.json and data/tables-16k.json name exactly the cohorts `python -m resolver.r12sim`
    fills, and every one of them says it is simulated (label, tags, sim-* model, no hf_id)."""
    import json

    from resolver.catalog.datasets import load_dataset
    from resolver.sim.r12study import STAND_INS, TABLES_PROFILES, eval_entry

    expected = {"r12": {s.profile for s in STAND_INS},
                "r12-leaderboard": {s.profile for s in STAND_INS if s.leaderboard},
                "tables-16k": set(TABLES_PROFILES)}
    for name, profiles in expected.items():
        dataset = load_dataset(repo / "data" / f"{name}.json")
        assert {e.model for e in dataset.evals} == profiles
        for spec in dataset.evals:
            assert spec.label.startswith("Simulated ") and "simulated" in spec.tags
            assert spec.model.startswith("sim-") and spec.hf_id is None
    for stand_in in STAND_INS:
        for study in ("r12", "tables-16k"):
            path = repo / "data" / study / stand_in.profile / "evals.json"
            if study == "r12" or stand_in.profile in TABLES_PROFILES:
                assert json.loads(path.read_text()) == [eval_entry(stand_in, study, f"data/{study}/{stand_in.profile}")]
