"""Foundations every package may use: the user-error type, strict input reading,
atomic writes, the virtualenv bootstrap, typed-file models and their
one-line errors, child processes that end with their parent (imports nothing else).
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.core import FileModel, at, error_line, first_problem, validate_file
    from resolver.core.atomic import write_text_atomic
    from resolver.core.bootstrap import REPO, reexec_in_venv
    from resolver.core.errors import UserError, choices_text, file_not_found
    from resolver.core.inputs import compile_search, did_you_mean, display_path, read_json_file, read_yaml_file, refuse_unknown_keys
    from resolver.core.lifeline import ENV_PARENT, child_options, die_with_parent, watch_parent_from_env
    from resolver.core.text_tables import markdown_table, plain_table

__all__ = [
    "validate_file",
    "first_problem",
    "error_line",
    "at",
    "FileModel",
    "child_options",
    "choices_text",
    "compile_search",
    "did_you_mean",
    "die_with_parent",
    "display_path",
    "ENV_PARENT",
    "file_not_found",
    "markdown_table",
    "plain_table",
    "read_json_file",
    "read_yaml_file",
    "reexec_in_venv",
    "refuse_unknown_keys",
    "REPO",
    "UserError",
    "watch_parent_from_env",
    "write_text_atomic",
]

_HOMES = {
    "validate_file": "typed",
    "first_problem": "typed",
    "error_line": "typed",
    "at": "typed",
    "FileModel": "typed",
    "REPO": "bootstrap",
    "ENV_PARENT": "lifeline",
    "UserError": "errors",
    "child_options": "lifeline",
    "choices_text": "errors",
    "compile_search": "inputs",
    "did_you_mean": "inputs",
    "die_with_parent": "lifeline",
    "display_path": "inputs",
    "file_not_found": "errors",
    "markdown_table": "text_tables",
    "plain_table": "text_tables",
    "read_json_file": "inputs",
    "read_yaml_file": "inputs",
    "reexec_in_venv": "bootstrap",
    "refuse_unknown_keys": "inputs",
    "watch_parent_from_env": "lifeline",
    "write_text_atomic": "atomic",
}
_MODULES = {}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
