"""Synthetic transcripts in the CLI's format, varied by a seeded random generator.

They exercise what real sessions rarely show in a short test: branches (rewinds),
parallel tool calls fanning out, sidechains, meta and compaction entries, slash
commands, titles and tags, lines longer than the 64 KiB read window, the spaced JSON
spelling, corrupt and truncated lines. Used by the differential test and the bench.
"""

from __future__ import annotations

import json
import os
import random
import uuid
from pathlib import Path
from typing import Any

__all__ = ["write_project", "write_transcript"]


def _uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _stamp(n: int) -> str:
    day, hour, minute = 1 + n // 86400 % 28, n // 3600 % 24, n // 60 % 60
    return f"2026-03-{day:02d}T{hour:02d}:{minute:02d}:{n % 60:02d}.{n % 1000:03d}Z"


def _entries(rng: random.Random, sid: str, cwd: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    clock = rng.randrange(10**6)
    tips: list[str | None] = [None]

    def add(kind: str, parent: str | None, **extra: Any) -> str:
        nonlocal clock
        clock += rng.randrange(1, 5)
        uid = _uid(rng)
        entry = {
            "parentUuid": parent,
            "isSidechain": False,
            "type": kind,
            "uuid": uid,
            "timestamp": _stamp(clock),
            "sessionId": sid,
            "cwd": cwd,
            "gitBranch": rng.choice(["main", "dev", "HEAD"]),
        }
        entry.update(extra)
        out.append(entry)
        return uid

    if rng.random() < 0.2:
        out.append({"type": "permission-mode", "permissionMode": "default", "sessionId": sid})
    for turn in range(rng.randrange(1, 6)):
        parent = rng.choice(tips) if rng.random() < 0.2 else tips[-1]
        roll = rng.random()
        if roll < 0.1:
            prompt: Any = f"<command-name>/cmd{turn}</command-name>"
        elif roll < 0.15:
            prompt = [
                {"type": "text", "text": "<local-command-stdout>x</local-command-stdout>"},
                {"type": "text", "text": f"prompt\n{turn} " + "w" * rng.choice([5, 250])},
            ]
        elif roll < 0.2:
            prompt = "x" * rng.choice([10, 70000])
        else:
            prompt = f"Please do task {turn} " + "é" * rng.randrange(3)
        meta = {"isMeta": True} if rng.random() < 0.1 else {}
        if rng.random() < 0.05:
            meta["isCompactSummary"] = True
        user = add("user", parent, message={"role": "user", "content": prompt}, **meta)
        msg_id = "msg_" + _uid(rng)[:8]
        ncalls = rng.choice([0, 0, 1, 2, 3])
        prev = user
        calls = []
        for i in range(ncalls):
            call_id = f"toolu_{_uid(rng)[:12]}"
            prev = add(
                "assistant",
                prev,
                message={
                    "id": msg_id,
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": call_id,
                            "name": "Bash",
                            "input": {"command": f"echo {i}"},
                        }
                    ],
                },
            )
            calls.append((prev, call_id))
        rng.shuffle(calls)
        last = prev
        for owner, call_id in calls:
            extra: dict[str, Any] = {}
            if rng.random() < 0.5:
                extra["sourceToolAssistantUUID"] = owner
            last = add(
                "user",
                owner,
                message={
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "ok"}],
                },
                **extra,
            )
        if rng.random() < 0.1:
            add("progress", last, data={"type": "hook_progress"})
        if rng.random() < 0.15:
            side = add("user", last, message={"role": "user", "content": "side"}, isSidechain=True)
            add(
                "assistant",
                side,
                isSidechain=True,
                agentId="a1",
                message={
                    "id": "msg_s",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "s"}],
                },
            )
        reply = add(
            "assistant",
            last,
            message={
                "id": "msg_" + _uid(rng)[:8],
                "role": "assistant",
                "content": [{"type": "text", "text": f"done {turn}"}],
            },
        )
        if rng.random() < 0.1:
            add("system", reply, subtype="turn_duration", durationMs=5)
        tips.append(reply)
        if rng.random() < 0.3:
            out.append({"type": "last-prompt", "lastPrompt": f"task {turn}", "sessionId": sid})
    if rng.random() < 0.2:
        out.append(
            {"type": "custom-title", "customTitle": f"Title {rng.randrange(99)}", "sessionId": sid}
        )
    if rng.random() < 0.1:
        out.append({"type": "ai-title", "aiTitle": "AI title", "sessionId": sid})
    if rng.random() < 0.15:
        out.append({"type": "tag", "tag": rng.choice(["", "red", "blue"]), "sessionId": sid})
    if rng.random() < 0.05:
        out.append({"type": "summary", "summary": "A summary", "leafUuid": out[-1].get("uuid")})
    return out


def _render(rng: random.Random, entries: list[dict[str, Any]]) -> str:
    spaced = rng.random() < 0.1
    lines = []
    for e in entries:
        lines.append(json.dumps(e) if spaced else json.dumps(e, separators=(",", ":")))
        if rng.random() < 0.03:
            lines.append("{corrupt " + "z" * rng.randrange(20))
    if rng.random() < 0.05:
        rng.shuffle(lines)
    text = "\n".join(lines) + "\n"
    if rng.random() < 0.1:
        text = text[: rng.randrange(len(text))]  # a crash mid-write
    return text


def write_transcript(folder: Path, rng: random.Random, cwd: str, *, sidechain: bool = False) -> str:
    """Write one random transcript into `folder`; returns its session id.

    Args:
        folder: The project directory.
        rng: The random source.
        cwd: The project path recorded in the entries.
        sidechain: Write a subagent-style transcript (first entry is a sidechain).

    Returns:
        The session id (the file's name without `.jsonl`).
    """
    sid = _uid(rng)
    entries = _entries(rng, sid, cwd)
    if sidechain and entries:
        entries[0]["isSidechain"] = True
    (folder / f"{sid}.jsonl").write_text(_render(rng, entries), encoding="utf-8")
    stamp = 1_700_000_000 + rng.randrange(10**6)
    os.utime(folder / f"{sid}.jsonl", (stamp, stamp))
    return sid


def write_project(projects: Path, key: str, cwd: str, count: int, seed: int) -> list[str]:
    """Write `count` random transcripts under `projects/key`.

    Args:
        projects: The `projects` directory of a config dir.
        key: The project directory's name.
        cwd: The project path recorded in the entries.
        count: How many transcripts.
        seed: The random seed (the same seed writes the same files).

    Returns:
        The session ids written.
    """
    rng = random.Random(seed)
    folder = projects / key
    folder.mkdir(parents=True, exist_ok=True)
    return [write_transcript(folder, rng, cwd, sidechain=rng.random() < 0.05) for _ in range(count)]
