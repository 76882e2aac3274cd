"""How long the client waits: the defaults of runner.py's --timeout and --load-timeout.

The one definition of each: ChatClient's defaults and RunOptions' (runner.py's flags) are
these names (docs/decisions.md, *One definition per default and per rule*). Nothing is
imported here, so runner.py's parser reads them without loading the HTTP modules.
"""
from __future__ import annotations

__all__ = ["DEFAULT_LOAD_TIMEOUT", "DEFAULT_TIMEOUT"]

DEFAULT_TIMEOUT = 3600.0        # seconds one request attempt may take before it is retried
DEFAULT_LOAD_TIMEOUT = 600.0    # seconds a server may answer 503 "Loading model" before requests give up
