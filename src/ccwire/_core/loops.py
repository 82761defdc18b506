"""Whether asyncio runs in this thread, asked without importing asyncio.

ccwire imports asyncio only in code that runs on an asyncio loop already: a trio
program never loads it, and no asyncio loop can be running before asyncio was imported.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

__all__ = ["running_asyncio", "running_asyncio_loop"]


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


def running_asyncio() -> bool:
    """True when the calling task runs on asyncio (not trio, trio's guest mode on an
    asyncio loop included, and not outside a loop)."""
    try:
        import sniffio
    except ImportError:  # pragma: no cover - anyio >= 4.12 no longer needs sniffio
        return running_asyncio_loop() is not None
    try:
        return sniffio.current_async_library() == "asyncio"
    except sniffio.AsyncLibraryNotFoundError:
        return False
