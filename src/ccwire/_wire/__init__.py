"""The wire: what crosses the CLI's stdin and stdout, as bytes and as typed values.

NDJSON framing (`framing`), the codec that alone knows the wire's field names
(`codec`, `codec_callbacks`), and the typed frozen dataclasses above it: messages and
content blocks, hook inputs and outputs, permission types, control request results,
JSON-RPC shapes. Unknown frames pass through raw. Pure data and pure functions: no I/O.
May import: `_core`.
"""

from typing import TYPE_CHECKING

from .._core.lazy import install_lazy_importer

# loaded on first use: the message, control-result and callback classes they define
# are compiled when the first connection needs them, not by ``import ccwire``
if TYPE_CHECKING or not install_lazy_importer(__name__):
    from . import (
        codec as codec,
        control_requests as control_requests,
        control_types as control_types,
        hook_input as hook_input,
        hook_output as hook_output,
        messages as messages,
    )
