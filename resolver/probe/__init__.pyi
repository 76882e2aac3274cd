# resolver.probe's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import loops as loops, outputs as outputs, tokenizers as tokenizers
from .failure import failure_report as failure_report
from .fft import FREQUENCIES as FREQUENCIES, fft_output as fft_output, fft_table as fft_table
from .outputs import (
    FailureOutput as FailureOutput,
    FftOutput as FftOutput,
    TruncationOutput as TruncationOutput,
)
from .render import failure_markdown as failure_markdown, truncation_markdown as truncation_markdown
from .schemas import OUTPUT_MODELS as OUTPUT_MODELS, output_schema_texts as output_schema_texts
from .spectrum_cache import SpectrumCache as SpectrumCache
from .tokenizers import (
    ByteTokenizer as ByteTokenizer,
    eval_tokenizers as eval_tokenizers,
    fft_tokenizers as fft_tokenizers,
    load_tokenizer as load_tokenizer,
)
from .truncation import truncation_output as truncation_output, truncation_report as truncation_report
