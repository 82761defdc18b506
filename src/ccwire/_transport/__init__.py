"""The transport: a byte pipe to a CLI process, and finding the CLI.

`base` is the `Transport` interface; `subprocess` runs the real CLI (spawned by
`asyncio_process` on asyncio), `memory` is the in-memory pair tests use;
`line_writer` and `line_buffer` frame writes and reads; `discovery` finds the
``claude`` executable. May import: `_wire`, `_core`.
"""
