"""The environment that runs the real ``claude`` CLI offline against a ScriptedModel."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Protocol

__all__ = ["OFFLINE_API_KEY", "offline_env"]

OFFLINE_API_KEY = "sk-ant-scripted-offline"
"""The dummy API key handed to the CLI; the scripted model accepts any key."""

_PASSTHROUGH = ("PATH", "LANG")


class ModelEndpoint(Protocol):
    """What `offline_env()` reads of a model server: a started `ScriptedModel` fits."""

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:40123``."""
        ...

    @property
    def model(self) -> str:
        """The model id the server answers as."""
        ...


def offline_env(
    model: ModelEndpoint | str,
    *,
    home: str | os.PathLike[str],
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Return the variables that make the ``claude`` CLI talk only to ``model``.

    ``model`` is a started `ScriptedModel` or a base URL.
    ``home`` becomes ``HOME``: use a fresh temporary directory, so no user settings,
    credentials or sessions leak into the run.  The result holds only what is needed:

    * ``HOME``, ``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY`` (a dummy key);
    * ``ANTHROPIC_MODEL`` = ``model.model`` when ``model`` is a ScriptedModel, so the
      CLI's model (and hence the cost it reports) does not depend on the CLI version;
      an explicit ``--model`` still wins;
    * ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``, ``DISABLE_TELEMETRY=1``,
      ``DISABLE_AUTOUPDATER=1``: no traffic other than model requests;
    * ``ENABLE_TOOL_SEARCH=false``: MCP tools are offered directly, not behind ToolSearch;
    * ``CLAUDE_CODE_TMPDIR`` = ``<home>/.tmp`` (the CLI creates it, private): the CLI's
      temporary files (it leaves a probe folder behind on every start) stay in ``home``
      instead of piling up in the machine's shared ``/tmp/claude-<uid>``;
    * ``NO_PROXY``/``no_proxy`` for loopback, so a proxy configured in the caller's
      environment (the SDK merges this dict into ``os.environ``) is bypassed;
    * ``PATH`` and ``LANG`` copied from ``os.environ`` when set.

    ``extra`` is applied last and may override any of these.
    """
    env = {k: os.environ[k] for k in _PASSTHROUGH if k in os.environ}
    if isinstance(model, str):
        url = model.rstrip("/")
    else:
        url = model.url
        env["ANTHROPIC_MODEL"] = model.model
    env.update(
        HOME=os.fspath(home),
        ANTHROPIC_BASE_URL=url,
        ANTHROPIC_API_KEY=OFFLINE_API_KEY,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        ENABLE_TOOL_SEARCH="false",
        CLAUDE_CODE_TMPDIR=os.path.join(os.fspath(home), ".tmp"),
        NO_PROXY="127.0.0.1,localhost,::1",
        no_proxy="127.0.0.1,localhost,::1",
    )
    env.update(extra or {})
    return env
