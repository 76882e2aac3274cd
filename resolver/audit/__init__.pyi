# resolver.audit's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import film_reader as film_reader
from . import players as players
from . import theme_agreement as theme_agreement
from .cli import register as register
