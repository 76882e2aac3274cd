# resolver.share's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import blobs as blobs
from . import manifest as manifest
from . import scopes as scopes
from . import sync as sync
from . import tarsafe as tarsafe
from .manifest import (
    DEFAULT_PATH as DEFAULT_PATH,
)
from .manifest import (
    load_manifest as load_manifest,
)
from .manifest import (
    update_manifest as update_manifest,
)
from .remotes import choose_remote_url as choose_remote_url
from .remotes import open_remote as open_remote
from .scopes import SCOPES as SCOPES
