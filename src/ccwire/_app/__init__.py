"""The ``ccwire`` command line: ``run``, ``demo``, ``doctor`` and ``serve``.

`main` parses the arguments and maps failures to exit codes (`io`); `run` drives a
conversation, `events` turns messages into what the screen shows and `render` shows
it (plain, JSON or a live rich display): the ``ccwire run`` output is made here.
`loaders` imports ``--tools`` and ``--scripted``; `trace`, `demo`, `doctor` and
`permissions` are the other commands' parts. The top layer: may import everything,
including the public `ccwire.testing`.
"""
