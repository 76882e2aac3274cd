"""Loading Hugging Face tokenizers (tokenizers only, no torch), shared by calibration,
probe.py, the explorer and `cohort.py context`."""
from __future__ import annotations

import os

from resolver.errors import UserError


def quiet_transformers() -> None:
    """transformers announces at import that torch is absent; we only use its tokenizers."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")


def load_hf_tokenizer(name_or_path: str, *, offline: bool = False):
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
        try:
            return AutoTokenizer.from_pretrained(name_or_path, local_files_only=local_only)
        except Exception as exc:  # transformers raises OSError, ValueError, HTTP errors, ...
            reason = (str(exc).splitlines() or [type(exc).__name__])[0]
    raise UserError(f"cannot load tokenizer {name_or_path!r} ({reason}); give a HuggingFace "
                    "tokenizer id (cached or downloadable) or a directory with tokenizer files")
