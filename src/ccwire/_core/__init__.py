"""The core: the one exception tree, and package plumbing.

`errors` holds every exception ccwire raises, rooted at `CcwireError`; `lazy` loads
a package's re-exports on first use and gives public objects their public module.
`origin` is the empty base that names the reference's package in the MRO of the
agent objects (options, client) for frameworks that tell SDKs apart by it.
Imports nothing of ccwire: every other layer may import it.
"""

from typing import TYPE_CHECKING

from .lazy import install_lazy_importer

# loaded on first use (pathlib costs 2.5 ms): for the annotations that name ``Path``,
# which ``typing.get_type_hints`` resolves
if TYPE_CHECKING or not install_lazy_importer(__name__):
    from pathlib import Path as Path
