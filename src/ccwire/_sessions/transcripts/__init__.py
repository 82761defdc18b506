"""Sessions from the Claude Code CLI's own JSONL transcripts.

The CLI records every session under `<config dir>/projects/<project key>/`. These
modules list, read, fork, rename, tag and delete them, with the signatures and
results of the reference SDK's session helpers: `paths` (where files are), `lite`
and `chain` (pure parsing), `listing`, `reading` and `mutations` (file I/O),
`fork` (the pure fork transform) and `summary` (incremental store summaries).
"""

from ..stores.summary import fold_session_summary
from .archive import archive_session, unarchive_session
from .errors import SessionNotFoundError, TranscriptArgumentError
from .listing import get_session_info, list_sessions
from .mutations import delete_session, fork_session, rename_session, tag_session
from .paths import project_key_for_directory
from .reading import get_session_messages, get_subagent_messages, list_subagents
from .types import ForkSessionResult, SDKSessionInfo, SessionMessage

__all__ = [
    "ForkSessionResult",
    "SDKSessionInfo",
    "SessionMessage",
    "SessionNotFoundError",
    "TranscriptArgumentError",
    "archive_session",
    "delete_session",
    "fold_session_summary",
    "fork_session",
    "get_session_info",
    "get_session_messages",
    "get_subagent_messages",
    "list_sessions",
    "list_subagents",
    "project_key_for_directory",
    "rename_session",
    "tag_session",
    "unarchive_session",
]
