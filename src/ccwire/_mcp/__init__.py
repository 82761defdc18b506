"""MCP: tools, resources and prompts served in-process, and MCP servers elsewhere.

`tools`, `schema` and `handlers` define tools and validate their input; `server`
dispatches MCP requests to them (`calls`, `resources`, `prompts`, `limits`,
`broadcast`); `routing` carries the CLI's ``mcp_message`` requests to the right
server; `config` types every kind of server configuration; `bridge` hosts servers
written with the official ``mcp`` package; `serve` serves ccwire tools to any MCP
client. A tool call is handled here. May import: `_protocol`, `_transport`,
`_wire`, `_core`; not `_callbacks`, its sibling.
"""

from typing import TYPE_CHECKING

from .._core.lazy import install_lazy_importer

# loaded on first use: the server, for the annotations that name it
# (``typing.get_type_hints`` resolves them)
if TYPE_CHECKING or not install_lazy_importer(__name__):
    from . import server as server
