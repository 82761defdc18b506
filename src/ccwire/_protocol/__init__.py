"""The control protocol: requests both ways over one transport.

`core` is the protocol without I/O (lines in, events out; answers in, lines out);
`control` is the one async driver around it, which reads the transport, serves the
CLI's requests and correlates ours with the CLI's answers; `inbox` queues
conversation messages for the reader; `ledger` tracks which prompts are owed an
answer; `features` tells what the connected CLI supports.
May import: `_transport`, `_wire`, `_core`.
"""

from typing import TYPE_CHECKING

from .._core.lazy import install_lazy_importer

# loaded on first use (it reads the CLI's messages): see ``_wire/__init__.py``
if TYPE_CHECKING or not install_lazy_importer(__name__):
    from . import features as features
