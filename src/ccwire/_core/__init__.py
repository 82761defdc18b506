"""The core: the one exception tree, and package plumbing.

`errors` holds every exception ccwire raises, rooted at `CcwireError`; `lazy` loads
a package's re-exports on first use and gives public objects their public module.
`origin` is the empty base that names the reference's package in the MRO of the
agent objects (options, client) for frameworks that tell SDKs apart by it.
Imports nothing of ccwire: every other layer may import it.
"""
