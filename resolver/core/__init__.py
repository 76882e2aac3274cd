"""Foundations every package may use: the user-error type, strict input reading,
atomic writes, the virtualenv bootstrap, typed-file models and their
one-line errors, child processes that end with their parent (imports nothing else).
"""
from __future__ import annotations

import importlib
from types import ModuleType

# Standard library only (the quick start imports core from a bare python3, before the
# virtualenv exists: docs/architecture.md), so these are plain imports.
from resolver.core.atomic import write_text_atomic
from resolver.core.errors import UserError, choices_text, file_not_found
from resolver.core.inputs import compile_search, did_you_mean, display_path, read_json_file, read_yaml_file
from resolver.core.lifeline import ENV_PARENT, child_options, die_with_parent, watch_parent_from_env
from resolver.core.text_tables import markdown_table, plain_table

__all__ = ["ENV_PARENT", "UserError", "bootstrap", "child_options", "choices_text", "compile_search",
           "did_you_mean", "die_with_parent", "display_path", "file_not_found", "markdown_table", "plain_table",
           "progress", "read_json_file", "read_yaml_file", "typed",
           "watch_parent_from_env", "write_text_atomic"]


def __getattr__(name: str) -> ModuleType:
    # Public submodules that load when first asked for (`from resolver.core.typed import FileModel`);
    # `progress` (typing) only where a loop may show a bar. Of the others:
    # `typed` needs pydantic, which the bare-python3 bootstrap does not have yet, and `bootstrap`
    # (pathlib, subprocess) is needed only by the quick start and the r12 study.
    if name in ("bootstrap", "progress", "typed"):
        return importlib.import_module(f"resolver.core.{name}")
    raise AttributeError(f"module 'resolver.core' has no attribute {name!r}")
