"""Tests of ccwire.testing (ScriptedModel and its pytest plugin)."""
