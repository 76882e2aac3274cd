"""Model metadata from the Hugging Face hub (analyze.py modelinfo).

For each model id, huggingface_hub's snapshot_download fetches README.md, every
*config.json and recipe.yaml into <output_dir>/<org>__<name>/. Offline (HF_HUB_OFFLINE=1,
or the hub unreachable) it returns an already-filled folder instead, so a cache
directory filled once keeps working. A model that can be neither downloaded nor
found locally is named and skipped. MODELINFO.md then summarises what the config
files say: architecture, parameter count (estimated from the config when the
files do not state it), layers, hidden size, experts, context length,
quantization and licence.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence, TypeGuard

import yaml

from resolver.config import hub_unreachable
from resolver.core import markdown_table

if TYPE_CHECKING:
    from resolver.core.progress import Bar

PATTERNS = ["README.md", "*config.json", "recipe.yaml"]
EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
ACTIVE_EXPERT_KEYS = ("num_experts_per_tok", "moe_topk", "num_selected_experts", "top_k")


def model_folder(output_dir: str | Path, hf_id: str) -> Path:
    return Path(output_dir) / hf_id.replace("/", "__")


def fetch_model_files(hf_id: str, output_dir: str | Path) -> tuple:
    """(folder, None) after download or from a filled local folder; (None, reason) on failure."""
    from huggingface_hub import snapshot_download

    folder = model_folder(output_dir, hf_id)
    unreachable = hub_unreachable(hf_id)     # one short request instead of the client's retries
    if unreachable:
        return (folder, None) if _has_files(folder) else (None, f"hub unreachable ({unreachable}) and "
                                                                f"nothing in {folder}")
    try:
        path = snapshot_download(repo_id=hf_id, allow_patterns=PATTERNS, local_dir=folder)
        return Path(path), None
    except Exception as exc:  # hub errors come in many types; every one means "skip this model"
        if _has_files(folder):
            return folder, None
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")


def _has_files(folder: Path) -> bool:
    return folder.is_dir() and any(p.is_file() and not p.name.startswith(".") for p in folder.iterdir())


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError, RecursionError):      # downloaded files are not trusted
        return {}


def _front_matter(readme: Path) -> dict:
    """The YAML front matter of a model card (license, base_model, ...)."""
    if not readme.is_file():
        return {}
    text = readme.read_text(encoding="utf-8", errors="replace")
    match = re.match(r"^---\s*\n(.*?)\n---\s*\n", text, re.DOTALL)
    if not match:
        return {}
    try:
        data = yaml.safe_load(match.group(1))
    except (yaml.YAMLError, RecursionError):             # a downloaded card is not trusted
        return {}
    return data if isinstance(data, dict) else {}


def _text_config(config: dict) -> dict:
    """Multimodal configs nest the language model under text_config / llm_config."""
    for key in ("text_config", "llm_config", "language_config"):
        if isinstance(config.get(key), dict) and config[key].get("hidden_size"):
            merged = dict(config[key])
            merged.setdefault("architectures", config.get("architectures"))
            merged.setdefault("quantization_config", config.get("quantization_config"))
            return merged
    return config


def _first(config: dict, keys: Iterable[str]) -> Any:
    for key in keys:
        if config.get(key) is not None:
            return config[key]
    return None


def _is_size(value: object) -> TypeGuard[int]:
    """A usable size: a positive int (a missing or null key is not)."""
    return isinstance(value, int) and value > 0


def estimate_parameters(config: dict) -> tuple:
    """(total, active) parameter counts of a decoder-only transformer from its config.

    Attention: q and o projections hidden x heads*head_dim, k and v hidden x
    kv_heads*head_dim; MLP: three matrices (gated) of hidden x intermediate per
    expert; embeddings vocab x hidden, doubled unless tied. Norms and biases are
    ignored (well under 1%). None when the config lacks the needed sizes.
    """
    hidden, layers, vocab = config.get("hidden_size"), config.get("num_hidden_layers"), config.get("vocab_size")
    heads = config.get("num_attention_heads")
    if not (_is_size(hidden) and _is_size(layers) and _is_size(vocab) and _is_size(heads)):
        return None, None
    head_dim = config.get("head_dim") or hidden // heads
    kv_heads = config.get("num_key_value_heads") or heads
    attention = 2 * hidden * heads * head_dim + 2 * hidden * kv_heads * head_dim
    experts = _first(config, EXPERT_KEYS)
    active = _first(config, ACTIVE_EXPERT_KEYS)
    dense_inter = config.get("intermediate_size") or 4 * hidden
    if experts:
        expert_inter = config.get("moe_intermediate_size") or dense_inter
        shared = (config.get("n_shared_experts") or 0) * 3 * hidden * expert_inter
        mlp_total = experts * 3 * hidden * expert_inter + shared
        mlp_active = (active or experts) * 3 * hidden * expert_inter + shared
    else:
        mlp_total = mlp_active = 3 * hidden * dense_inter
    embeddings = vocab * hidden * (1 if config.get("tie_word_embeddings") else 2)
    return embeddings + layers * (attention + mlp_total), embeddings + layers * (attention + mlp_active)


def _quantization(config: dict, folder: Path) -> str:
    quant = config.get("quantization_config")
    if isinstance(quant, dict):
        method = quant.get("quant_method") or quant.get("format") or "quantized"
        bits = quant.get("bits") or quant.get("w_bit") or quant.get("weight_bits")
        return f"{method}" + (f" {bits}-bit" if bits else "")
    if (folder / "recipe.yaml").is_file():
        return "see recipe.yaml"
    dtype = config.get("torch_dtype") or config.get("dtype")
    return str(dtype) if dtype else "—"


def summarize_model(hf_id: str, folder: Path) -> dict:
    """What MODELINFO.md shows about one model, from its downloaded files."""
    raw = _read_json(folder / "config.json")
    config = _text_config(raw)
    card = _front_matter(folder / "README.md")
    total, active = estimate_parameters(config)
    experts = _first(config, EXPERT_KEYS)
    architectures = config.get("architectures") or raw.get("architectures") or []
    return {
        "hf_id": hf_id,
        "architecture": ", ".join(architectures) if architectures else (config.get("model_type") or "—"),
        "model_type": config.get("model_type") or raw.get("model_type"),
        "parameters": total, "active_parameters": active if experts else total,
        "layers": config.get("num_hidden_layers"), "hidden_size": config.get("hidden_size"),
        "attention_heads": config.get("num_attention_heads"), "kv_heads": config.get("num_key_value_heads"),
        "experts": experts, "active_experts": _first(config, ACTIVE_EXPERT_KEYS) if experts else None,
        "context_length": config.get("max_position_embeddings") or config.get("seq_length"),
        "vocab_size": config.get("vocab_size"),
        "quantization": _quantization(raw, folder),
        "license": card.get("license") or "—",
        "base_model": card.get("base_model"),
        "files": sorted(p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")),
    }


def human_count(value: float | None) -> str:
    if not value:
        return "—"
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if value >= size:
            return f"{value / size:.1f}{unit}"
    return str(value)


def modelinfo_markdown(models: list, skipped: list, without: Sequence[tuple[str, str]] = ()) -> str:
    """MODELINFO.md: one summary table, then a section per model; `without` lists
    (eval_id, label) of selected evals whose evals.json has no hf_id (e.g. simulated models)."""
    headers = ["Model", "Architecture", "Params (≈)", "Active (≈)", "Layers", "Hidden", "Experts (active)",
               "Context", "Quantization", "License"]
    rows = []
    for m in models:
        experts = f"{m['experts']} ({m['active_experts'] or '?'})" if m["experts"] else "—"
        rows.append([m["hf_id"], m["architecture"], human_count(m["parameters"]), human_count(m["active_parameters"]),
                     m["layers"] or "—", m["hidden_size"] or "—", experts, m["context_length"] or "—",
                     m["quantization"], m["license"]])
    parts = ["# Model information", "",
             "Parameter counts are estimated from config.json (attention, MLP/experts, embeddings; norms ignored).", "",
             markdown_table(rows, headers)]
    for m in models:
        parts += ["", f"## {m['hf_id']}", ""]
        for key in ("architecture", "model_type", "attention_heads", "kv_heads", "vocab_size", "base_model"):
            if m.get(key):
                parts.append(f"- {key.replace('_', ' ')}: {m[key]}")
        parts.append(f"- files: {', '.join(m['files']) or '—'}")
    if skipped:
        parts += ["", "## Skipped", ""] + [f"- {hf_id}: {reason}" for hf_id, reason in skipped]
    if without:
        parts += ["", "## Without hf_id", "", "These evals name no Hugging Face model in their evals.json "
                  "(simulated models have none), so there is nothing to download:", ""]
        parts += [f"- {eval_id}: {label}" for eval_id, label in without]
    return "\n".join(parts) + "\n"


def collect_modelinfo(hf_ids: Iterable[str], output_dir: str | Path, progress: Bar | None = None) -> tuple:
    """Fetch and summarise each model: (models, skipped [(hf_id, reason)])."""
    models, skipped = [], []
    for hf_id in hf_ids:
        folder, reason = fetch_model_files(hf_id, output_dir)
        if folder is None:
            skipped.append((hf_id, reason))
        else:
            models.append(summarize_model(hf_id, folder))
        if progress:
            progress.update(1)
    return models, skipped
