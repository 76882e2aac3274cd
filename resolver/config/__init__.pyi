# resolver.config's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from .hf_tokenizers import (
    hub_unreachable as hub_unreachable,
)
from .hf_tokenizers import (
    load_hf_tokenizer as load_hf_tokenizer,
)
from .hf_tokenizers import (
    train_table_tokenizer as train_table_tokenizer,
)
from .loader import (
    DENSITIES as DENSITIES,
)
from .loader import (
    ExperimentConfig as ExperimentConfig,
)
from .loader import (
    Precision as Precision,
)
from .loader import (
    Step as Step,
)
from .loader import (
    expand_steps as expand_steps,
)
from .loader import (
    expected_points as expected_points,
)
from .loader import (
    load_config as load_config,
)
from .prompts import (
    Sampler as Sampler,
)
from .prompts import (
    SamplerFile as SamplerFile,
)
from .prompts import (
    Template as Template,
)
from .prompts import (
    TemplateFile as TemplateFile,
)
from .prompts import (
    build_request as build_request,
)
from .prompts import (
    load_sampler as load_sampler,
)
from .prompts import (
    load_template as load_template,
)
from .prompts import (
    render_messages as render_messages,
)
