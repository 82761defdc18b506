"""Loads ccwire's pytest plugin for this repository's own runs.

`pyproject.toml` disables the plugin's entry point (``-p no:ccwire``): an entry-point
plugin is imported before pytest-cov starts measuring, which would leave the top level
of every module it imports unmeasured. Loaded from here, it is imported once coverage
runs. Users get the plugin from the entry point, as always.
"""

# pytester: the plugin's own tests run a user's pytest session in-process
pytest_plugins = ("ccwire.testing._pytest_plugin", "pytester")
