"""The transport: a byte pipe to a CLI process, and finding the CLI.

`base` is the `Transport` interface; `subprocess` runs the real CLI, `memory` is the
in-memory pair tests use; `line_writer` writes whole lines; `discovery` finds the
``claude`` executable. May import: `_wire`, `_core`.
"""
