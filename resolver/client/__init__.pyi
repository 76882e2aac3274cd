# resolver.client's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from .cache import (
    TRANSPORT_ONLY_FIELDS as TRANSPORT_ONLY_FIELDS,
    ResponseCache as ResponseCache,
    canonical_request as canonical_request,
    request_key as request_key,
)
from .chat import (
    ChatClient as ChatClient,
    RequestFailed as RequestFailed,
    fast_event_loop as fast_event_loop,
)
from .completions import (
    Completion as Completion,
    PromptTooLong as PromptTooLong,
    cached_completion as cached_completion,
    completion_from_payload as completion_from_payload,
)
from .endpoints import api_key_from_env as api_key_from_env, parse_endpoint as parse_endpoint
from .http_policy import classify_error as classify_error, error_text as error_text
from .timeouts import DEFAULT_LOAD_TIMEOUT as DEFAULT_LOAD_TIMEOUT, DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from .tls import ssl_context_for as ssl_context_for
