"""What each ``ccwire`` command runs, its module imported only when the command runs.

The commands' modules import most of ccwire (the client, the MCP server, rich...):
`main` reaches them through this module, whose names load on first use (the one lazy
import mechanism, `ccwire._core.lazy`), so that parsing, ``--help`` and usage errors
(`arguments`) never pay for them.
"""

from typing import TYPE_CHECKING

from .._core.lazy import install_lazy_importer

if TYPE_CHECKING or not install_lazy_importer(__name__):
    from .batch import batch_command
    from .batch_report import report_command
    from .compat import compat_command
    from .demo import demo_command
    from .doctor import doctor_command
    from .run import run_command
    from .serve import exit_without_abandoned_threads, serve_command
    from .sessions import sessions_command, show_command

__all__ = [
    "batch_command",
    "compat_command",
    "demo_command",
    "doctor_command",
    "exit_without_abandoned_threads",
    "report_command",
    "run_command",
    "serve_command",
    "sessions_command",
    "show_command",
]
