"""The `SessionStore` protocol: where session transcripts are mirrored and read back.

The shape is the one of Anthropic's `claude-agent-sdk` 0.2.187, so an adapter written
for it works with ccwire and the other way round. A store keeps, under a
`SessionKey`, the list of transcript entries (one JSON object per line of the
CLI's JSONL transcript) appended to it, in order.

Only `SessionStore.append` and `SessionStore.load` are required. The other
methods are optional: an adapter may leave them out, and callers probe for them with
`store_implements()` (never with `isinstance`, so a duck-typed adapter need not
subclass `SessionStore`). The defaults on the protocol raise `NotImplementedError`,
so a subclass can inherit them as "absent".
"""

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from typing_extensions import NotRequired, Required, TypedDict

from ..._core.errors import OptionsError

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


class SessionKey(TypedDict):
    """Where one transcript lives in a store.

    Attributes:
        project_key: The caller's scope: by default the sanitized working directory
            (see `project_key_for_directory`); a multi-tenant deployment may use a
            tenant id instead.
        session_id: The session id.
        subpath: Set for a subagent transcript (for example `subagents/agent-1`),
            absent for the main transcript. Never the empty string. Opaque to the
            adapter: a storage key suffix.
    """

    project_key: str
    session_id: str
    subpath: NotRequired[str]


class SessionStoreEntry(TypedDict, total=False):
    """One transcript line as a store sees it: an opaque JSON object.

    Only `type` is guaranteed; most entries also carry a `uuid` (an idempotency
    key for adapters) and a `timestamp`. Adapters pass every other field through;
    a `json.dumps`/`json.loads` round trip is the only invariant they must keep.
    """

    type: Required[str]
    uuid: str
    timestamp: str


class SessionStoreListEntry(TypedDict):
    """One session as `SessionStore.list_sessions` returns it.

    Attributes:
        session_id: The session id.
        mtime: When the store last wrote it, in Unix epoch milliseconds.
    """

    session_id: str
    mtime: int


class SessionSummaryEntry(TypedDict):
    """A session's summary, kept up to date by the store inside `append`.

    Attributes:
        session_id: The session id.
        mtime: The store's write time of the summary, in Unix epoch milliseconds, on
            the same clock as `SessionStoreListEntry.mtime` (never an entry's own
            timestamp).
        data: State owned by `fold_session_summary`: stores keep it verbatim and
            never interpret it.
    """

    session_id: str
    mtime: int
    data: dict[str, Any]


class SessionListSubkeysKey(TypedDict):
    """The key given to `SessionStore.list_subkeys`: a session, without a subpath."""

    project_key: str
    session_id: str


SessionStoreFlushMode = Literal["batched", "eager"]
"""When mirrored transcript entries reach the store.

`"batched"` (the default) flushes once per turn (at the result) or when 500 entries
or 1 MiB are pending; `"eager"` flushes in the background after every mirrored frame.
"""


class SessionStore(Protocol):
    """An adapter that keeps copies of session transcripts in external storage.

    The CLI still writes its transcripts to local disk; the store gets a second copy.
    ccwire never deletes from a store unless `delete` is called explicitly (for example
    by `delete_session_via_store`): retention is the adapter's business (a TTL, a
    lifecycle rule, a scheduled cleanup).
    """

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Append a batch of transcript entries to `key`.

        Within one process, entries are kept in the order of the `append` calls. An
        entry's `uuid`, when it has one, is an idempotency key: appending the same
        entry twice keeps one copy. `append(key, [])` does nothing.

        Args:
            key: The transcript to append to.
            entries: JSON objects, one per transcript line.
        """
        ...

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """Every entry appended to `key`, in order.

        Args:
            key: The transcript to read.

        Returns:
            The entries, deep-equal to what was appended (key order inside an object
            may differ), or `None` for a key never written.
        """
        ...

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The main transcripts (no subpath) stored under `project_key`. Optional.

        Args:
            project_key: The scope to list.

        Returns:
            One entry per session, in any order.
        """
        raise NotImplementedError

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        """The summaries of the sessions under `project_key`. Optional.

        A store keeps them with `fold_session_summary` inside `append` (main
        transcripts only), serializing concurrent appends to one session.

        Args:
            project_key: The scope to list.

        Returns:
            One summary per main transcript, in any order.
        """
        raise NotImplementedError

    async def delete(self, key: SessionKey) -> None:
        """Delete a transcript. Optional.

        Deleting a main transcript also deletes every subkey of the session (and its
        summary); deleting a key with a subpath deletes that one transcript only.
        Deleting an unknown key does nothing.

        Args:
            key: The transcript to delete.
        """
        raise NotImplementedError

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The subpaths stored under a session (subagent transcripts). Optional.

        Args:
            key: The session.

        Returns:
            The subpaths, in any order; never the main transcript.
        """
        raise NotImplementedError


OPTIONAL_METHODS: frozenset[str] = frozenset(
    {"list_sessions", "list_session_summaries", "delete", "list_subkeys"}
)
"""The names of the optional `SessionStore` methods."""


def store_implements(store: object, method: str) -> bool:
    """Whether `store` really implements the optional `SessionStore` method `method`.

    A method inherited from a protocol default that raises `NotImplementedError`
    (ccwire's, or one of the same name on another protocol class) counts as absent.

    Args:
        store: Any object used as a session store.
        method: One of `OPTIONAL_METHODS`.

    Returns:
        `True` if the store's class defines the method itself.
    """
    impl = getattr(type(store), method, None)
    if impl is None or not callable(impl):
        return False
    for cls in type(store).__mro__:
        if method in cls.__dict__:
            # the class that defines it: a Protocol's default body counts as absent
            return not getattr(cls, "_is_protocol", False)
    return False


def key_parts(key: SessionKey | SessionListSubkeysKey) -> tuple[str, str, str]:
    """`(project_key, session_id, subpath)` of a key, `""` for the main transcript.

    Every store method that takes a key reads it here, so a key of the wrong type is
    refused by name, never looked up as some other key (a store found nothing under
    ``load(5)``, or wrote under a key no load would find).

    Args:
        key: The key.

    Returns:
        The three parts.

    Raises:
        OptionsError: The key is not a mapping, its `project_key` or `session_id` is
            missing or not a str, or its `subpath` is not a str (or is empty: omit it
            for the main transcript).
    """
    raw: object = key
    if not isinstance(raw, Mapping):
        raise OptionsError(
            "key must be a SessionKey (a dict with str 'project_key' and 'session_id'), "
            f"not {type(raw).__name__}"
        )
    for part in ("project_key", "session_id"):
        if part not in key:
            raise OptionsError(
                f"key has no {part!r}: a SessionKey has 'project_key' and 'session_id'"
            )
        check_str(f"key[{part!r}]", key[part])
    subpath = key.get("subpath")
    if subpath is not None:
        subpath = check_str("key['subpath']", subpath)
    if subpath == "":
        raise OptionsError("a SessionKey subpath is never empty: omit it for the main transcript")
    return key["project_key"], key["session_id"], subpath or ""


def check_str(name: str, value: object) -> str:
    """Refuse an argument (a key's part, a `project_key`, a session id) that is not a
    str: a store asked for ``5`` answered as for something it does not know.

    Args:
        name: The argument's name, for the error.
        value: Its value.

    Returns:
        ``value``.

    Raises:
        OptionsError: It is not a str.
    """
    if not isinstance(value, str):
        raise OptionsError(f"{name} must be a str, not {type(value).__name__}")
    return value


def check_entries(entries: list[SessionStoreEntry]) -> list[SessionStoreEntry]:
    """Refuse entries to append that are not a list of dicts.

    Args:
        entries: What `SessionStore.append` was given.

    Returns:
        ``entries``.

    Raises:
        OptionsError: They are not a list (or tuple), or one is not a mapping.
    """
    if not isinstance(entries, Sequence) or isinstance(entries, (str, bytes)):
        raise OptionsError(
            f"entries must be a list of transcript entries (dicts), not {type(entries).__name__}"
        )
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise OptionsError(f"entries[{i}] must be a dict, not {type(entry).__name__}")
    return entries
