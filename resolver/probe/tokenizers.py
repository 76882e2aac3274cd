"""Tokenizers for probe.py: a Hugging Face tokenizer (hub id or local path) or UTF-8 bytes.

``load_tokenizer(spec)`` returns an object with ``encode(text) -> list[int]`` and a
``name``. ``spec``: ``"bytes"`` (token ids = UTF-8 bytes, always available offline),
a local directory / tokenizer.json, or a hub id (uses the local cache first and the
hub when reachable). A tokenizer that cannot be loaded is a UserError naming it.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

from resolver.config import load_hf_tokenizer
from resolver.core import UserError

if TYPE_CHECKING:
    import pandas as pd

BYTES = "bytes"


class Tokenizer(Protocol):
    """What probe.py reads a prompt through: ByteTokenizer, HFTokenizer or a bare tokenizer.json."""

    @property
    def name(self) -> str: ...

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]: ...


class ByteTokenizer:
    """Token ids are the UTF-8 bytes: no download, no vocabulary, still periodic where text is.

    ``fallback``: True when bytes were chosen because no tokenizer was given or cached
    (``fft_tokenizers``), so a view can say so; False when asked for by name.
    """

    name = BYTES
    chat_template = None

    def __init__(self, fallback: bool = False):
        self.fallback = fallback

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return list(text.encode("utf-8", "surrogatepass"))


class HFTokenizer:
    """A transformers tokenizer wrapped to the small interface probe.py needs."""

    def __init__(self, name: str, tokenizer: Any):
        self.name = name
        self._tok = tokenizer
        self.chat_template = getattr(tokenizer, "chat_template", None)

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=add_special_tokens))

    def render_chat(self, messages: list[dict]) -> str:
        return self._tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def load_tokenizer(spec: str | None, offline: bool = False) -> Tokenizer:
    """The tokenizer for `spec` (see the module docstring); None -> bytes.

    offline=True only looks in the local Hugging Face cache (used for an eval's
    hf_id, so a machine without network never waits on the hub).
    """
    if not spec or spec == BYTES:
        return ByteTokenizer()
    path = Path(spec)
    if path.is_file() and path.suffix == ".json":
        from tokenizers import Tokenizer

        try:
            return _RawTokenizer(str(path), Tokenizer.from_file(str(path)))
        except Exception as exc:  # tokenizers raises its own exception types
            raise UserError(f"cannot load tokenizer file {spec}: {exc}")
    return HFTokenizer(spec, load_hf_tokenizer(spec, offline=offline))


class _RawTokenizer:
    """A bare tokenizer.json (tokenizers library)."""

    chat_template = None

    def __init__(self, name: str, tokenizer: Any):
        self.name = name
        self._tok = tokenizer

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=add_special_tokens).ids)


def render_prompt(messages: list[dict] | None, tokenizer: Tokenizer) -> str:
    """The prompt as sent: the tokenizer's chat template when it has one, else the contents."""
    if getattr(tokenizer, "chat_template", None) and hasattr(tokenizer, "render_chat"):
        try:
            return tokenizer.render_chat(messages)
        except Exception:  # a template that rejects these roles: fall back to plain text
            pass
    return "\n\n".join(str(m.get("content", "")) for m in messages or [] if isinstance(m, dict))


def eval_tokenizers(evals: pd.DataFrame, spec: str | None, *, fallback: Tokenizer | None = None,
                    warn: Callable[[str], None] | None = None) -> dict:
    """eval_id -> tokenizer: `spec` for every eval when given, else each eval's hf_id from
    the local Hugging Face cache (never the network), else `fallback`; `warn` is told of
    each hf_id that is not in the cache."""
    if spec:
        shared = load_tokenizer(spec)
        return {e: shared for e in evals["eval_id"]}
    out: dict[str, Tokenizer | None] = {}
    loaded: dict[str, Tokenizer | None] = {}
    for eval_id, hf_id in zip(evals["eval_id"], evals["hf_id"]):
        hf_id = hf_id if isinstance(hf_id, str) and hf_id else None   # pandas gives NaN for a missing id
        if hf_id and hf_id not in loaded:
            try:
                loaded[hf_id] = load_tokenizer(hf_id, offline=True)
            except UserError:
                if warn:
                    warn(f"tokenizer {hf_id} is not in the local cache; eval {eval_id} "
                         f"gets {getattr(fallback, 'name', 'no tokenizer')} (pass --tokenizer to choose one)")
                loaded[hf_id] = fallback
        out[eval_id] = loaded[hf_id] if hf_id else fallback
    return out


def fft_tokenizers(evals: pd.DataFrame, spec: str | None, *, warn: Callable[[str], None] | None = None) -> dict:
    """eval_id -> the tokenizer of the prompt FFT, the one rule of probe.py fft and the explorer's panel:
    `spec` for every eval when given, else the eval's hf_id tokenizer from the local cache, else UTF-8
    bytes (a ByteTokenizer with ``fallback`` set, so the explorer can say the bytes were a fallback)."""
    return eval_tokenizers(evals, spec, fallback=ByteTokenizer(fallback=True), warn=warn)
