# resolver.config's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from .hf_tokenizers import (
    hub_unreachable as hub_unreachable,
    load_hf_tokenizer as load_hf_tokenizer,
    train_table_tokenizer as train_table_tokenizer,
)
from .loader import (
    DENSITIES as DENSITIES,
    Density as Density,
    ExperimentConfig as ExperimentConfig,
    Precision as Precision,
    Step as Step,
    expand_steps as expand_steps,
    expected_points as expected_points,
    load_config as load_config,
)
from .point_identity import DEFAULT_SEED as DEFAULT_SEED
from .prompts import (
    Sampler as Sampler,
    SamplerFile as SamplerFile,
    Template as Template,
    TemplateFile as TemplateFile,
    build_request as build_request,
    load_sampler as load_sampler,
    load_template as load_template,
    render_messages as render_messages,
)
