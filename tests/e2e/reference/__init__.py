"""The reference SDK's live e2e tests (``e2e-tests/``), ported to run offline.

Each module ports one file of claude-agent-sdk's ``e2e-tests/`` directory: the same
behaviour and the same checks, against the real CLI with a `ScriptedModel` playing the
model, so that what the reference proves against the live API is proved for ccwire.
"""
