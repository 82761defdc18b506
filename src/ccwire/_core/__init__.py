"""The core: the one exception tree, and package plumbing.

`errors` holds every exception ccwire raises, rooted at `CcwireError`; `lazy`
makes the package root's re-exports load on first use; `slots` builds small
record classes cheaply. Imports nothing of ccwire: every other layer may import it.
"""
