"""The asyncio loop running in this thread, asked without importing asyncio.

ccwire imports asyncio only in code that runs on an asyncio loop already: a trio
program never loads it, and no asyncio loop can be running before asyncio was imported.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

__all__ = ["running_asyncio_loop"]


def running_asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The asyncio loop running in this thread, or ``None`` (trio, or no loop at all)."""
    module = sys.modules.get("asyncio")
    if module is None:
        return None
    try:
        loop: asyncio.AbstractEventLoop = module.get_running_loop()
    except RuntimeError:
        return None
    return loop
