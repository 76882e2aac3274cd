# resolver.share's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from . import blobs as blobs, manifest as manifest, scopes as scopes, sync as sync, tarsafe as tarsafe
from .manifest import (
    DEFAULT_PATH as DEFAULT_PATH,
    load_manifest as load_manifest,
    update_manifest as update_manifest,
)
from .remotes import choose_remote_url as choose_remote_url, open_remote as open_remote
from .scopes import SCOPES as SCOPES
