"""`list_sessions` and `get_session_info`: session metadata straight from the files.

Each transcript costs one `open`, one `fstat` and at most two unbuffered 64 KiB
reads; the metadata is then computed by `lite.info_from_head_tail`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from .archive import archived_state, is_programmatic
from .lite import LITE_READ_BUF_SIZE, info_from_head_tail
from .paths import (
    CASE_INSENSITIVE,
    MAX_SANITIZED_LENGTH,
    candidate_project_dirs,
    canonicalize_path,
    find_project_dir,
    projects_dir,
    sanitize_path,
    valid_uuid,
    worktree_paths,
)
from .types import SDKSessionInfo

__all__ = ["get_session_info", "list_sessions"]

logger = logging.getLogger("ccwire.transcripts")


class _Tally:
    """Unreadable lines met during one listing, reported once at the end."""

    __slots__ = ("files", "lines")

    def __init__(self) -> None:
        self.lines = 0
        self.files = 0

    def add(self, skipped: int) -> None:
        if skipped:
            self.lines += skipped
            self.files += 1

    def report(self, what: str) -> None:
        if self.lines:
            logger.warning(
                "%s: skipped %d unreadable transcript line(s) in %d file(s)",
                what,
                self.lines,
                self.files,
            )


def _read_info(
    path: str,
    session_id: str,
    project_path: str | None,
    tally: _Tally,
    include_programmatic: bool = True,
) -> SDKSessionInfo | None:
    """Stat and read the head and tail of one transcript; `None` if empty or unreadable
    (or programmatic, unless ``include_programmatic``)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        head_bytes = os.read(fd, LITE_READ_BUF_SIZE)
        if not head_bytes:
            return None
        size = st.st_size
        if size > LITE_READ_BUF_SIZE:
            os.lseek(fd, size - LITE_READ_BUF_SIZE, os.SEEK_SET)
            tail_bytes = os.read(fd, LITE_READ_BUF_SIZE)
            tail = tail_bytes.decode("utf-8", errors="replace")
            head = head_bytes.decode("utf-8", errors="replace")
        else:
            head = tail = head_bytes.decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)
    if not include_programmatic and is_programmatic(head, tail):
        return None
    info, skipped = info_from_head_tail(
        session_id, head, tail, int(st.st_mtime * 1000), size, project_path
    )
    tally.add(skipped)
    if info is not None:
        info.archived = archived_state(Path(path), session_id, head, tail)
    return info


def _read_dir(
    project_dir: str | Path,
    project_path: str | None,
    tally: _Tally,
    include_programmatic: bool = True,
) -> list[SDKSessionInfo]:
    try:
        it = os.scandir(project_dir)
    except OSError:
        return []
    out: list[SDKSessionInfo] = []
    with it:
        for entry in it:
            name = entry.name
            if not name.endswith(".jsonl") or not valid_uuid(name[:-6]):
                continue
            info = _read_info(entry.path, name[:-6], project_path, tally, include_programmatic)
            if info is not None:
                out.append(info)
    return out


def _dedupe(infos: list[SDKSessionInfo]) -> list[SDKSessionInfo]:
    newest: dict[str, SDKSessionInfo] = {}
    for info in infos:
        seen = newest.get(info.session_id)
        if seen is None or info.last_modified > seen.last_modified:
            newest[info.session_id] = info
    return list(newest.values())


def _sort_page(infos: list[SDKSessionInfo], limit: int | None, offset: int) -> list[SDKSessionInfo]:
    infos.sort(key=lambda s: s.last_modified, reverse=True)
    if offset > 0:
        infos = infos[offset:]
    if limit is not None and limit > 0:
        infos = infos[:limit]
    return infos


def _project_dirs() -> list[Path]:
    try:
        return [e for e in projects_dir().iterdir() if e.is_dir()]
    except OSError:
        return []


def _for_project(
    directory: str,
    limit: int | None,
    offset: int,
    include_worktrees: bool,
    tally: _Tally,
    programmatic: bool,
) -> list[SDKSessionInfo]:
    canonical = canonicalize_path(directory)
    trees = worktree_paths(canonical) if include_worktrees else []
    if len(trees) <= 1:
        own = find_project_dir(canonical)
        if own is None:
            return []
        return _sort_page(_read_dir(own, canonical, tally, programmatic), limit, offset)
    # Longest key first, so the most specific worktree claims a directory.
    keyed = []
    for tree in trees:
        key = sanitize_path(tree)
        keyed.append((tree, key.lower() if CASE_INSENSITIVE else key))
    keyed.sort(key=lambda pair: len(pair[1]), reverse=True)
    try:
        dirs = [e for e in projects_dir().iterdir() if e.is_dir()]
    except OSError:
        own = find_project_dir(canonical)
        found = [] if own is None else _read_dir(own, canonical, tally, programmatic)
        return _sort_page(found, limit, offset)
    infos: list[SDKSessionInfo] = []
    taken: set[str] = set()
    own = find_project_dir(canonical)
    if own is not None:
        taken.add(own.name.lower() if CASE_INSENSITIVE else own.name)
        infos.extend(_read_dir(own, canonical, tally, programmatic))
    for entry in dirs:
        name = entry.name.lower() if CASE_INSENSITIVE else entry.name
        if name in taken:
            continue
        for tree, key in keyed:
            if name == key or (len(key) >= MAX_SANITIZED_LENGTH and name.startswith(key + "-")):
                taken.add(name)
                infos.extend(_read_dir(entry, tree, tally, programmatic))
                break
    return _sort_page(_dedupe(infos), limit, offset)


def list_sessions(
    directory: str | None = None,
    limit: int | None = None,
    offset: int = 0,
    include_worktrees: bool = True,
    *,
    include_programmatic: bool = True,
) -> list[SDKSessionInfo]:
    """List past sessions from the CLI's transcripts, newest first.

    Subagent transcripts and sessions with nothing to title them by are left out.
    A transcript with corrupt or truncated lines is still listed; the lines are
    skipped and counted in a warning on the `ccwire.transcripts` logger.

    Args:
        directory: A project directory: list its sessions (and, in a git
            repository, those of its other worktrees). `None` lists every project.
        limit: At most this many sessions (ignored unless positive).
        offset: Skip this many first (for paging).
        include_worktrees: Whether `directory`'s git worktrees count too.
        include_programmatic: Whether sessions an SDK started (entrypoints
            ``sdk-cli``, ``sdk-ts``, ``sdk-py``, so ccwire's own too) or a daemon ran
            are listed; `False` lists only those a person started, as the CLI's
            ``/resume`` does.

    Returns:
        One `SDKSessionInfo` per session, by `last_modified`, newest first.

    Example:
        ```python
        from ccwire import list_sessions

        for info in list_sessions("/home/ann/src/app", limit=20):
            print(info.session_id, info.summary)
        ```
    """
    tally = _Tally()
    if directory:
        result = _for_project(
            directory, limit, offset, include_worktrees, tally, include_programmatic
        )
    else:
        infos: list[SDKSessionInfo] = []
        for project in _project_dirs():
            infos.extend(_read_dir(project, None, tally, include_programmatic))
        result = _sort_page(_dedupe(infos), limit, offset)
    tally.report("list_sessions")
    return result


def get_session_info(session_id: str, directory: str | None = None) -> SDKSessionInfo | None:
    """The metadata of one session, read from its transcript alone.

    Args:
        session_id: The session's UUID.
        directory: Its project directory (its git worktrees are tried too); `None`
            searches every project.

    Returns:
        The session's `SDKSessionInfo`, or `None` when it is not found, not a UUID,
        a subagent transcript, or has nothing to title it by.

    Example:
        ```python
        from ccwire import get_session_info

        info = get_session_info("550e8400-e29b-41d4-a716-446655440000")
        print(info.summary if info else "no such session")
        ```
    """
    if not valid_uuid(session_id):
        return None
    tally = _Tally()
    name = f"{session_id}.jsonl"
    try:
        for project_dir, project_path in candidate_project_dirs(directory):
            info = _read_info(str(project_dir / name), session_id, project_path, tally)
            if info is not None or _has_content(project_dir / name):
                return info
        return None
    finally:
        tally.report("get_session_info")


def _has_content(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False
