# resolver.audit's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import film_reader as film_reader, outputs as outputs, players as players, theme_agreement as theme_agreement
from .outputs import ShortcutsOutput as ShortcutsOutput
from .render import audit_markdown as audit_markdown
from .shortcuts import MIN_SAMPLES as MIN_SAMPLES, run_audit as run_audit
