"""User callbacks the CLI asks for: permission decisions and hooks.

`permissions` answers ``can_use_tool``; `hooks` registers hook callbacks and answers
``hook_callback``; `reporting` reports a failed callback. A permission decision is
made here. May import: `_protocol`, `_transport`, `_wire`, `_core`; not `_mcp`, its
sibling.
"""
