"""A conversation with the CLI: options in, messages out.

`options` is `ClaudeAgentOptions`; `argv` and `cli_env` turn it into the CLI's
command line and environment; `connection` wires a transport, the control protocol,
tools, permissions and hooks together; `client` is `ClaudeSDKClient`, `query` the
one-shot `query()`; `runtime_control` holds the typed runtime requests; `audit` logs
the traffic. May import every layer below: `_mcp`, `_callbacks`, `_protocol`,
`_transport`, `_wire`, `_core`.
"""
