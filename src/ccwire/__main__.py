"""``python -m ccwire``: the command line."""

from ._app.main import main

raise SystemExit(main())
