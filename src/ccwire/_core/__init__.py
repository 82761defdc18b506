"""The core: the one exception tree, and package plumbing.

`errors` holds every exception ccwire raises, rooted at `CcwireError`; `lazy` loads
a package's re-exports on first use and gives public objects their public module.
Imports nothing of ccwire: every other layer may import it.
"""
