# resolver.probe's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import cli as cli
from . import loops as loops
from . import tokenizers as tokenizers
from .fft import FREQUENCIES as FREQUENCIES
from .fft import fft_table as fft_table
from .tokenizers import eval_tokenizers as eval_tokenizers
