"""The control protocol: requests both ways over one transport.

`core` is the protocol without I/O (lines in, events out; answers in, lines out);
`control` is the one async driver around it, which reads the transport, serves the
CLI's requests and correlates ours with the CLI's answers; `inbox` queues
conversation messages for the reader; `ledger` tracks which prompts are owed an
answer; `features` tells what the connected CLI supports.
May import: `_transport`, `_wire`, `_core`.
"""
