# resolver.web's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import (
    explorer as explorer,
)
from . import (
    explorer_figures as explorer_figures,
)
from . import (
    lbdiff as lbdiff,
)
from . import (
    leaderboard as leaderboard,
)
from . import (
    leaderboard_table as leaderboard_table,
)
from . import (
    spiderweb as spiderweb,
)
from . import (
    theme as theme,
)
from . import (
    urlstate as urlstate,
)
from .data import check_group_by as check_group_by
from .data import open_app_dataset as open_app_dataset
from .server import (
    add_server_args as add_server_args,
)
from .server import (
    app_links as app_links,
)
from .server import (
    check_port as check_port,
)
from .server import (
    normalize_base_pathname as normalize_base_pathname,
)
from .server import (
    serve as serve,
)
