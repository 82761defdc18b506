"""The `SessionStore` protocol, re-exported where the store adapters import it.

It is defined in `ccwire._conversation.transcript_store.protocol`, in the conversation
layer, because `ClaudeAgentOptions.session_store` names it.
"""

from ..._conversation.transcript_store.protocol import (
    OPTIONAL_METHODS,
    SessionKey,
    SessionListSubkeysKey,
    SessionStore,
    SessionStoreEntry,
    SessionStoreFlushMode,
    SessionStoreListEntry,
    SessionSummaryEntry,
    check_entries,
    check_str,
    key_parts,
    store_implements,
)

__all__ = [
    "OPTIONAL_METHODS",
    "SessionKey",
    "SessionListSubkeysKey",
    "SessionStore",
    "SessionStoreEntry",
    "SessionStoreFlushMode",
    "SessionStoreListEntry",
    "SessionSummaryEntry",
    "check_entries",
    "check_str",
    "key_parts",
    "store_implements",
]
