"""A conversation with the CLI: options in, messages out.

`options` is `ClaudeAgentOptions`; `argv` and `cli_env` turn it into the CLI's
command line and environment; `connection` wires a transport, the control protocol,
tools, permissions and hooks together; `client` is `ClaudeSDKClient`, `query` the
one-shot `query()`; `runtime_control` holds the typed runtime requests; `audit` logs
the traffic. May import every layer below: `_mcp`, `_callbacks`, `_protocol`,
`_transport`, `_wire`, `_core`.
"""

from typing import TYPE_CHECKING

from .._core.lazy import install_lazy_importer

# loaded on first use, for the annotations of the options and the client that name them
# (``typing.get_type_hints`` resolves them): modules that import no module of this
# layer, so no import cycle goes through this package
if TYPE_CHECKING or not install_lazy_importer(__name__):
    from . import (
        audit as audit,
        status_types as status_types,
        telemetry as telemetry,
        transcript_store as transcript_store,
    )
