"""What a conversation does with a transcript `SessionStore`.

`protocol` is the `SessionStore` protocol (the shape of the reference SDK's);
`mirror` batches the CLI's `transcript_mirror` frames into a store; `resume` loads a
session from a store into a temporary config directory the CLI resumes from; `link`
ties them to one connection (the `session_store` option).

They live in the conversation layer, below the store adapters and helpers of
`ccwire._sessions.stores`, because `ClaudeAgentOptions.session_store` names the
protocol and the connection drives the mirror and the resume: a layer only imports
downwards. Everything here is pure protocol and file handling; the adapters
(SQLite, PostgreSQL, Redis, in memory) stay above.
"""

from typing import TYPE_CHECKING

from ..._core.lazy import install_lazy_importer

# loaded on first use: the protocol, for the annotations of the options that name it
# (``typing.get_type_hints`` resolves them)
if TYPE_CHECKING or not install_lazy_importer(__name__):
    from .protocol import (
        SessionStore as SessionStore,
        SessionStoreFlushMode as SessionStoreFlushMode,
    )
