"""The transport: a byte pipe to a CLI process, and finding the CLI.

`base` holds the interfaces (`Transport`, the reference's; `LineTransport`, the one
the protocol drives) and the adapter between them; `subprocess` runs the real CLI, `memory` is the
in-memory pair tests use; `line_writer` writes whole lines; `discovery` finds the
``claude`` executable. May import: `_wire`, `_core`.
"""

from typing import TYPE_CHECKING

from .._core.lazy import install_lazy_importer

# loaded on first use: the interfaces and the spawn hook, for the annotations that name them
# (``typing.get_type_hints`` resolves them)
if TYPE_CHECKING or not install_lazy_importer(__name__):
    from . import base as base, spawn as spawn
