"""The control protocol: requests both ways over one transport.

`control` reads frames, correlates our requests with the CLI's answers, routes the
CLI's requests to handlers and answers each one exactly once; `inbox` queues
conversation messages for the reader; `ledger` tracks what is in flight; `workers`
runs handlers; `features` tells what the connected CLI supports.
May import: `_transport`, `_wire`, `_core`.
"""

from typing import TYPE_CHECKING

from .._core.lazy import install_lazy_importer

# loaded on first use (it reads the CLI's messages): see ``_wire/__init__.py``
if TYPE_CHECKING or not install_lazy_importer(__name__):
    from . import features as features
