"""Fault-injection tests: a misbehaving fake CLI run as a real subprocess."""
