# resolver.sim's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from .profiles import PROFILES as PROFILES
from .r12study import missing_data_hint as missing_data_hint
from .simulator import SimulatorServer as SimulatorServer
from .simulator import start_simulator_process as start_simulator_process
