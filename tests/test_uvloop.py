"""The process, transport and fake-CLI client tests again, on uvloop (see
:mod:`tests.fixtures.uvloop`); the fault suite does the same in ``tests/faults``."""

from __future__ import annotations

import pytest

pytest.importorskip("uvloop")

from tests.fixtures.uvloop import anyio_backend, test_the_loop_is_uvloops  # noqa: F401
from tests.test_asyncio_process import *  # noqa: F403
from tests.test_client_fake import *  # noqa: F403
from tests.test_subprocess_transport import *  # noqa: F403
