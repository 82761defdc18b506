"""A spawner the batch tests name by reference (``tests.batch.spawners:counting``): it
starts the CLI here and leaves a mark in ``$SPAWN_MARKS`` (a folder) for each start."""

from __future__ import annotations

import os
from typing import Any

from ccwire import SpawnOptions, spawn_local


def counting(options: SpawnOptions) -> Any:
    """A sync spawner returning the awaitable of the local spawn."""
    folder = options.env.get("SPAWN_MARKS") or os.environ.get("SPAWN_MARKS")
    if folder:
        with open(os.path.join(folder, f"{os.getpid()}-{os.urandom(4).hex()}"), "w") as fh:
            fh.write(" ".join(options.args))
    return spawn_local(options)
