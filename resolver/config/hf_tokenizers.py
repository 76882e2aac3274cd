"""Loading Hugging Face tokenizers (tokenizers only, no torch), shared by calibration,
probe.py, the explorer and `cohort.py context`."""
from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

from resolver.core import UserError
from resolver.tasks import get_task


def quiet_transformers() -> None:
    """transformers announces at import that torch is absent; we only use its tokenizers."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")


HUB_PROBE_TIMEOUT_S = 3.0


def hub_unreachable(repo_id: str, timeout: float = HUB_PROBE_TIMEOUT_S) -> str | None:
    """One request to the hub with a short timeout: None when it answers, else why not.

    Asked before any download, so an offline machine falls back to local files in a
    few seconds instead of waiting through the hub client's retries.
    """
    import requests
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return "HF_HUB_OFFLINE is set"
    try:
        requests.head(f"{constants.ENDPOINT}/api/models/{repo_id}", timeout=timeout, allow_redirects=False)
    except requests.RequestException as exc:
        return type(exc).__name__
    return None


def load_hf_tokenizer(name_or_path: str, *, offline: bool = False) -> Any:
    """AutoTokenizer for a local directory or a hub id: the local cache first, then the hub.

    offline=True never contacts the hub (an eval's hf_id on a machine without network
    must not wait on it). UserError naming the tokenizer when it cannot be loaded.
    """
    if not isinstance(name_or_path, str) or not name_or_path:
        raise UserError("a tokenizer must be a HuggingFace tokenizer id or a local tokenizer directory")
    quiet_transformers()
    from transformers import AutoTokenizer

    local_only_attempts = (True,) if offline or os.path.isdir(name_or_path) else (True, False)
    reason = ""
    for local_only in local_only_attempts:
        if not local_only:
            unreachable = hub_unreachable(name_or_path)
            if unreachable:       # one short attempt, not the hub client's minute of retries
                reason = f"the hub is unreachable: {unreachable}; nothing cached locally"
                break
        try:
            return AutoTokenizer.from_pretrained(name_or_path, local_files_only=local_only)
        except Exception as exc:  # transformers raises OSError, ValueError, HTTP errors, ...
            reason = (str(exc).splitlines() or [type(exc).__name__])[0]
    raise UserError(f"cannot load tokenizer {name_or_path!r} ({reason}); give a HuggingFace "
                    "tokenizer id (cached or downloadable) or a directory with tokenizer files")


def train_table_tokenizer(path: str | Path, num_rows: int = 20, repeats: int = 6, vocab_size: int = 2000) -> None:
    """Train a small, deterministic byte-level BPE on tables prompts and save it at `path`
    as a transformers tokenizer: a stand-in for a model's tokenizer where none can be
    downloaded (the simulated r12 study, calibration tests)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    task = get_task("tables")
    formats = ["markdown", "csv", "json", "html", "tsv", "jsonl"] * repeats
    texts = [task.generate_cases(task.validate({"num_rows": num_rows, "format": fmt}), random.Random(i), 1)[0].input
             for i, fmt in enumerate(formats)]
    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["[UNK]"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    Path(path).mkdir(parents=True, exist_ok=True)
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]").save_pretrained(path)
