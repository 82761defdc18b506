"""The transport: a byte pipe to a CLI process, and finding the CLI.

`base` holds the interfaces (`Transport`, the reference's; `LineTransport`, the one
the protocol drives) and the adapter between them; `subprocess` runs the real CLI, `memory` is the
in-memory pair tests use; `line_writer` writes whole lines; `discovery` finds the
``claude`` executable. May import: `_wire`, `_core`.
"""
