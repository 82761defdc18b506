"""The control protocol: requests both ways over one transport.

`control` reads frames, correlates our requests with the CLI's answers, routes the
CLI's requests to handlers and answers each one exactly once; `inbox` queues
conversation messages for the reader; `ledger` tracks what is in flight; `workers`
runs handlers; `features` tells what the connected CLI supports.
May import: `_transport`, `_wire`, `_core`.
"""
