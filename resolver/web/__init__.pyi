# resolver.web's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import (
    explorer as explorer,
    explorer_figures as explorer_figures,
    ids as ids,
    lbdiff as lbdiff,
    leaderboard as leaderboard,
    leaderboard_table as leaderboard_table,
    spiderweb as spiderweb,
    theme as theme,
    urlstate as urlstate,
)
from .data import check_group_by as check_group_by, open_app_dataset as open_app_dataset
from .server import (
    DEFAULT_HOST as DEFAULT_HOST,
    DEFAULT_LINK_PORTS as DEFAULT_LINK_PORTS,
    app_links as app_links,
    check_port as check_port,
    normalize_base_pathname as normalize_base_pathname,
    serve as serve,
)
