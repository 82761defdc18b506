"""Sessions you can watch and steer, and the agent that runs them.

`agent` is `ClaudeCodeAgent`; `session` the `Session` façade, which composes a
`runtime` (its tasks) with a `machine` (the one transition table over the states in
`state`) and a `lifecycle` (where its CLI process is); `events` are what observers
see; `store` keeps snapshots; `owner` and `inflight` track who runs what. A session
state change happens here. May import `_conversation` and everything below it.
"""
