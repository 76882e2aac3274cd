# resolver.run's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from .api_runner import run_api as run_api
from .batch import import_batch as import_batch, read_batch as read_batch, replay_batch as replay_batch, run_write_batch as run_write_batch
from .experiment import (
    RUN_MODES as RUN_MODES,
    CaseStreams as CaseStreams,
    Experiment as Experiment,
    RunOptions as RunOptions,
    build_experiment as build_experiment,
    messages_for as messages_for,
    request_for as request_for,
)
from .offline import run_offline as run_offline
from .report import NullBar as NullBar, Reporter as Reporter
from .summary import RunSummary as RunSummary
