"""Experiment configs: loading and validating YAML, grid expansion, calibration,
point identity and seeds, templates and samplers, Hugging Face tokenizer loading.
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.config.hf_tokenizers import hub_unreachable, load_hf_tokenizer, train_table_tokenizer
    from resolver.config.manifold import DENSITIES, ExperimentConfig, Precision, Step, expand_steps, expected_points, load_config
    from resolver.config.prompts import Sampler, SamplerFile, Template, TemplateFile, build_request, load_sampler, load_template, render_messages

__all__ = [
    "build_request",
    "DENSITIES",
    "expand_steps",
    "expected_points",
    "ExperimentConfig",
    "hub_unreachable",
    "load_config",
    "load_hf_tokenizer",
    "load_sampler",
    "load_template",
    "Precision",
    "render_messages",
    "Sampler",
    "SamplerFile",
    "Step",
    "Template",
    "TemplateFile",
    "train_table_tokenizer",
]

_HOMES = {
    "DENSITIES": "manifold",
    "ExperimentConfig": "manifold",
    "Precision": "manifold",
    "Sampler": "prompts",
    "SamplerFile": "prompts",
    "Step": "manifold",
    "Template": "prompts",
    "TemplateFile": "prompts",
    "build_request": "prompts",
    "expand_steps": "manifold",
    "expected_points": "manifold",
    "hub_unreachable": "hf_tokenizers",
    "load_config": "manifold",
    "load_hf_tokenizer": "hf_tokenizers",
    "load_sampler": "prompts",
    "load_template": "prompts",
    "render_messages": "prompts",
    "train_table_tokenizer": "hf_tokenizers",
}
_MODULES = {}
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
