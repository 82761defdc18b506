"""Tests of ``ClaudeAgentOptions`` and its small config types (``ccwire._conversation.options``)."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Any, get_args

import anyio
import pytest

import ccwire
from ccwire._conversation.argv import build_argv
from ccwire._conversation.options import (
    CLI_ENV_ALLOWLIST,
    AgentDefinition,
    ClaudeAgentOptions,
    OutputFormat,
    SandboxSettings,
    SdkPluginConfig,
    SystemPromptFile,
    SystemPromptPreset,
    ThinkingConfig,
    ToolsPreset,
    check_settings_file,
    check_skill_name,
)
from ccwire._wire.hook_types import HookMatcher
from ccwire._wire.permission_types import (
    PermissionMode,
    PermissionResult,
    PermissionResultAllow,
    ToolPermissionContext,
)
from tests.fixtures.wrappers import python_wrapper

MINI_CLI = Path(__file__).parents[1] / "fixtures" / "mini_cli.py"


async def allow_all(
    name: str, data: dict[str, Any], ctx: ToolPermissionContext
) -> PermissionResult:
    """A permission callback that allows everything."""
    return PermissionResultAllow()


def test_defaults() -> None:
    o = ClaudeAgentOptions()
    assert o.tools is None
    assert o.allowed_tools == []
    assert o.disallowed_tools == []
    assert o.system_prompt is None
    assert o.mcp_servers == {}
    assert o.permission_mode is None
    assert o.permission_prompt_tool_name is None
    assert o.can_use_tool is None
    assert o.hooks is None
    assert o.continue_conversation is False
    assert o.resume is None
    assert o.fork_session is False
    assert o.session_id is None
    assert o.resume_session_at is None
    assert o.max_turns is None
    assert o.max_budget_usd is None
    assert o.model is None
    assert o.fallback_model is None
    assert o.betas == []
    assert o.add_dirs == []
    assert o.settings is None
    assert o.setting_sources is None
    assert o.sandbox is None
    assert o.plugins == []
    assert o.skills is None
    assert o.output_format is None
    assert o.include_partial_messages is False
    assert o.include_hook_events is False
    assert o.strict_mcp_config is False
    assert o.agents is None
    assert o.extra_args == {}
    assert o.env == {}
    assert o.cwd is None
    assert o.user is None
    assert o.stderr is None
    assert o.cli_path is None
    assert o.thinking is None
    assert o.max_thinking_tokens is None
    assert o.effort is None
    assert o.enable_file_checkpointing is False
    assert o.max_buffer_size is None
    assert o.control_timeout == 60.0
    assert o.initialize_timeout == 60.0
    assert o.forward_subagent_text is None
    assert o.session_mirror is False
    assert o.inherit_env is True  # the whole environment, as in claude-agent-sdk


def test_keyword_only() -> None:
    # a TypeError, as the reference raises for a wrong argument, that says how to pass it
    with pytest.raises(TypeError) as raised:
        ClaudeAgentOptions(["Read"])  # type: ignore[call-arg]
    assert isinstance(raised.value, ccwire.OptionsError)
    assert str(raised.value).startswith(
        "ClaudeAgentOptions takes its options by name, as in ClaudeAgentOptions(tools=[...]), "
        "not by position: 1 positional argument given"
    )


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("allowed_tool", "allowed_tools"),
        ("allowedTools", "allowed_tools"),  # the TypeScript SDK's spelling
        ("systemprompt", "system_prompt"),
        ("max_turn", "max_turns"),
        ("permision_mode", "permission_mode"),
    ],
)
def test_a_misspelt_option_names_the_one_meant(typo: str, meant: str) -> None:
    misspelt: dict[str, Any] = {typo: None}
    with pytest.raises(ccwire.OptionsError, match=f"no option '{typo}': did you mean '{meant}'"):
        ClaudeAgentOptions(**misspelt)
    with pytest.raises(TypeError, match=f"did you mean '{meant}'"):  # as the reference raises
        dataclasses.replace(ClaudeAgentOptions(), **misspelt)
    with pytest.raises(ccwire.OptionsError, match=r"no option 'zzz' \(help\(ClaudeAgentOptions\)"):
        ClaudeAgentOptions(zzz=1)  # type: ignore[call-arg]
    # help() and editors still see every option by name
    assert "allowed_tools" in inspect.signature(ClaudeAgentOptions).parameters
    # set afterwards, the misspelt option was kept as an attribute nothing reads
    options = ClaudeAgentOptions()
    with pytest.raises(ccwire.OptionsError, match=f"no option '{typo}': did you mean '{meant}'"):
        setattr(options, typo, ["Read"])
    assert not hasattr(options, typo)
    setattr(options, meant, getattr(ClaudeAgentOptions(), meant))  # an option is set as ever


def test_a_subclass_sets_its_own_fields_and_private_attributes() -> None:
    @dataclasses.dataclass
    class Mine(ClaudeAgentOptions):
        team: str = "core"

    mine = Mine(team="web")
    mine.team = "data"
    mine._cache = {}  # type: ignore[attr-defined]
    assert (mine.team, mine._cache) == ("data", {})  # type: ignore[attr-defined]
    with pytest.raises(ccwire.OptionsError, match="no option 'allowed_tool'"):
        mine.allowed_tool = ["Read"]  # type: ignore[attr-defined]


def test_an_attribute_of_the_callers_own_is_set_as_on_a_plain_dataclass() -> None:
    # code that keeps its own data on the options runs as on claude-agent-sdk: only a
    # name that looks like a misspelt option is refused
    options = ClaudeAgentOptions()
    options.request_metadata = {"tenant": "a"}  # type: ignore[attr-defined]
    assert options.request_metadata == {"tenant": "a"}  # type: ignore[attr-defined]
    with pytest.raises(ccwire.OptionsError, match="did you mean 'system_prompt'"):
        options.systemPrompt = "x"  # type: ignore[attr-defined]


def test_mutable_and_defaults_not_shared() -> None:
    a = ClaudeAgentOptions()
    b = ClaudeAgentOptions()
    a.allowed_tools.append("Read")
    a.env["X"] = "1"
    a.model = "opus"
    assert b.allowed_tools == []
    assert b.env == {}
    assert a.model == "opus"


def test_replace_keeps_values() -> None:
    a = ClaudeAgentOptions(model="opus", env={"K": "v"})
    b = dataclasses.replace(a, max_turns=3)
    assert (b.model, b.env, b.max_turns) == ("opus", {"K": "v"}, 3)


def test_repr_hides_env_values() -> None:
    o = ClaudeAgentOptions(env={"ANTHROPIC_API_KEY": "sk-secret-123", "OTHER": "hidden-too"})
    text = repr(o)
    assert "sk-secret-123" not in text
    assert "hidden-too" not in text
    assert "env={'ANTHROPIC_API_KEY': '***', 'OTHER': '***'}" in text
    assert text.startswith("ClaudeAgentOptions(")
    assert str(o) == text


def test_repr_hides_mcp_secrets_but_shows_the_rest() -> None:
    server: Any = {"type": "http", "url": "https://x", "headers": {"Authorization": "Bearer t0k"}}
    stdio: Any = {"command": "srv", "env": {"TOKEN": "abc123"}}
    o = ClaudeAgentOptions(mcp_servers={"h": server, "s": stdio}, model="sonnet")
    text = repr(o)
    assert "t0k" not in text
    assert "abc123" not in text
    assert "'Authorization': '***'" in text
    assert "'url': 'https://x'" in text
    assert "model='sonnet'" in text
    # the options themselves are untouched
    assert server["headers"]["Authorization"] == "Bearer t0k"


def test_repr_hides_agent_mcp_secrets_and_settings_env() -> None:
    stdio: Any = {"command": "srv", "env": {"TOKEN": "agent-tok"}}
    settings = '{"env": {"ANTHROPIC_API_KEY": "sk-in-settings"}, "model": "opus"}'
    o = ClaudeAgentOptions(
        agents={"a": AgentDefinition("d", "p", mcp_servers=["fs", {"s": stdio}])},
        settings=settings,
    )
    text = repr(o)
    assert "agent-tok" not in text and "sk-in-settings" not in text
    assert "'TOKEN': '***'" in text and "'fs'" in text
    assert '"model": "opus"' in text
    assert o.settings == settings and stdio["env"]["TOKEN"] == "agent-tok"  # untouched
    assert "settings='/etc/s.json'" in repr(ClaudeAgentOptions(settings="/etc/s.json"))
    broken = ClaudeAgentOptions()
    broken.settings = '{"env": no-json}'  # refused at construction, but mutable
    assert "no-json" not in repr(broken)


def test_repr_shows_inherit_env_not_the_inherited_values() -> None:
    o = ClaudeAgentOptions(inherit_env=["PATH", "MY_*"])
    assert "inherit_env=('PATH', 'MY_*')" in repr(o)
    assert "session_mirror=False" in repr(o)
    assert "inherit_env=True," in repr(ClaudeAgentOptions())
    hardened = ClaudeAgentOptions(inherit_env=CLI_ENV_ALLOWLIST)
    assert "inherit_env=CLI_ENV_ALLOWLIST," in repr(hardened)


def test_repr_with_mcp_config_path() -> None:
    o = ClaudeAgentOptions(mcp_servers="/etc/mcp.json")
    assert "mcp_servers='/etc/mcp.json'" in repr(o)


def test_can_use_tool_excludes_permission_prompt_tool_name() -> None:
    with pytest.raises(ValueError, match="mutually exclusive"):
        ClaudeAgentOptions(can_use_tool=allow_all, permission_prompt_tool_name="mcp__a__b")


def test_can_use_tool_alone_is_fine() -> None:
    o = ClaudeAgentOptions(can_use_tool=allow_all)
    assert o.can_use_tool is allow_all


def test_fallback_model_must_differ() -> None:
    with pytest.raises(ValueError, match="fallback_model"):
        ClaudeAgentOptions(model="opus", fallback_model="opus")
    ok = ClaudeAgentOptions(model="opus", fallback_model="sonnet")
    assert ok.fallback_model == "sonnet"


@pytest.mark.parametrize("name", ["control_timeout", "initialize_timeout"])
@pytest.mark.parametrize("value", [0, -1.0])
def test_timeouts_must_be_positive(name: str, value: float) -> None:
    kwargs: dict[str, Any] = {name: value}
    with pytest.raises(ValueError, match=name):
        ClaudeAgentOptions(**kwargs)


def test_max_buffer_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_buffer_size"):
        ClaudeAgentOptions(max_buffer_size=0)
    assert ClaudeAgentOptions(max_buffer_size=10).max_buffer_size == 10


async def _hook(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
    return {}


async def _two_arguments(a: Any, b: Any) -> None:
    return None


def _no_arguments() -> None:
    return None


@ccwire.tool("add", "Add two numbers", {"a": int})
async def _add(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": []}


_CALC = ccwire.create_sdk_mcp_server("calc", tools=[_add])


@pytest.mark.parametrize(
    ("name", "value", "error", "match"),
    [
        # a str where a list is wanted was joined letter by letter: --allowedTools B,a,s,h
        ("allowed_tools", "Bash", TypeError, r"allowed_tools must be a list.*\['Bash'\]"),
        ("disallowed_tools", "Bash", TypeError, "disallowed_tools must be a list"),
        ("tools", "Read", TypeError, "tools must be a list"),
        ("betas", "context-1m", TypeError, "betas must be a list"),
        ("setting_sources", "user", TypeError, "setting_sources must be a list"),
        ("add_dirs", "/tmp", TypeError, "add_dirs must be a list"),  # --add-dir / t m p
        ("allowed_tools", 5, TypeError, "allowed_tools must be a list, not int"),
        # a list where a dict is wanted failed at connect with an AttributeError
        ("env", ["A=1"], TypeError, "env must be a dict"),
        ("extra_args", ["--debug"], TypeError, "extra_args must be a dict"),
        ("hooks", [HookMatcher()], TypeError, "hooks must be a dict"),
        ("mcp_servers", ["srv"], TypeError, "mcp_servers must be a dict"),
        # one server's config, or a tool, where a dict of servers by name goes: an
        # OptionsError from deep in connect, "mcp_servers['type'] must be a dict, got str"
        (
            "mcp_servers",
            _CALC,
            TypeError,
            r"got one server's config: write mcp_servers=\{'calc': server\} \(the key names "
            r"the server's tools: 'mcp__calc__<tool>'\)",
        ),
        ("mcp_servers", {"command": "npx"}, TypeError, r"write mcp_servers=\{'name': server\}"),
        (
            "mcp_servers",
            {"calc": _add},
            TypeError,
            r"mcp_servers\['calc'\] must be a server, got a tool: put tools in a server, "
            r"mcp_servers=\{'calc': create_sdk_mcp_server\('calc', tools=\[_add\]\)\}",
        ),
        ("mcp_servers", {"calc": [_add]}, TypeError, r"must be a server, got list: put tools"),
        # a callback that cannot be called failed only when the CLI called it
        ("can_use_tool", "allow", TypeError, "can_use_tool must be callable"),
        ("stderr", True, TypeError, "stderr must be callable"),
        # called without await: every line was lost, with a "never awaited" warning
        ("stderr", _hook, TypeError, "stderr must be a plain function.*not an async one"),
        ("on_callback_error", _hook, TypeError, "on_callback_error must be a plain function"),
        # one that cannot take its arguments failed only when the CLI called it, with
        # "takes 2 positional arguments but 3 were given" as the tool call's error
        (
            "can_use_tool",
            _two_arguments,
            TypeError,
            r"can_use_tool is called as can_use_tool\(tool_name, input, context\): "
            r"_two_arguments\(a, b\) cannot take these 3 arguments",
        ),
        (
            "hooks",
            {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[_two_arguments])]},  # type: ignore[list-item]
            TypeError,
            r"hooks\['PreToolUse'\]: a hook is called as hook\(input, tool_use_id, context\): "
            r"_two_arguments\(a, b\) cannot take these 3 arguments",
        ),
        ("on_user_dialog", _hook, TypeError, r"on_user_dialog is called as on_user_dialog"),
        ("on_elicitation", _hook, TypeError, r"on_elicitation is called as on_elicitation"),
        ("stderr", _no_arguments, TypeError, r"stderr is called as stderr\(line\)"),
        ("on_callback_error", _no_arguments, TypeError, r"on_callback_error\(error\)"),
        # a negative one was passed to the CLI (0 means no limit, as in the reference)
        ("max_turns", -1, ValueError, "max_turns cannot be negative"),
        ("max_thinking_tokens", -1, ValueError, "max_thinking_tokens cannot be negative"),
        ("max_thinking_tokens", "8000", TypeError, "max_thinking_tokens must be an int"),
        ("max_turns", "3", TypeError, "max_turns must be an int"),
        ("max_turns", True, TypeError, "max_turns must be an int"),
        # a str failed comparing with 0: "'<=' not supported between 'str' and 'int'"
        ("max_buffer_size", "1000", TypeError, "max_buffer_size must be an int"),
        ("max_buffered_bytes", 1.5, TypeError, "max_buffered_bytes must be an int"),
        # the CLI refused them only once started (a ProcessError); a KeyError for no total
        ("max_budget_usd", 0, ValueError, "max_budget_usd must be a positive number.*0"),
        ("max_budget_usd", -1.5, ValueError, "max_budget_usd must be a positive number"),
        ("max_budget_usd", float("nan"), ValueError, "max_budget_usd must be a positive number"),
        ("max_budget_usd", float("inf"), ValueError, "max_budget_usd must be a positive number"),
        ("max_budget_usd", "5", ValueError, "max_budget_usd must be a positive number"),
        ("task_budget", {"total": 0}, ValueError, "task_budget must be"),
        ("task_budget", {"tokens": 5}, ValueError, "task_budget must be"),
        ("task_budget", {"total": 2.5}, ValueError, "task_budget must be"),
        # the spawn failed: "expected str, bytes or os.PathLike object, not int", no option named
        ("model", 5, TypeError, "model must be a str, not int"),
        ("fallback_model", ["m"], TypeError, "fallback_model must be a str, not list"),
        # a bare TypeError or AttributeError from the spawn, a regex or a lookup, no option named
        ("cli_path", 5, TypeError, "cli_path must be a str or a Path, not int"),
        ("cwd", b"/tmp", TypeError, "cwd must be a str or a Path, not bytes"),
        ("debug_file", 5, TypeError, "debug_file must be a str or a Path"),
        ("resume", 5, TypeError, "resume must be a str, not int"),
        ("session_id", 5, TypeError, "session_id must be a str, not int"),
        ("client_app", 5, TypeError, "client_app must be a str, not int"),
        ("thinking", 5, TypeError, "thinking must be a dict, not int"),
        ("sandbox", 5, TypeError, "sandbox must be a dict, not int"),
        ("output_format", "json", TypeError, "output_format must be a dict, not str"),
        ("tool_config", 5, TypeError, "tool_config must be a dict, not int"),
        ("plugins", ["/plugins/a"], TypeError, "plugins items must be dicts"),
        ("audit_log", "audit.jsonl", TypeError, "audit_log must be an AuditLog, not str"),
        # the CLI left the agent out without a word
        (
            "agents",
            {"a": AgentDefinition(description="d", prompt="p", tools="Bash")},
            TypeError,
            r"agents\['a'\].tools must be a list of str, got 'Bash'",
        ),
        (
            "agents",
            {"a": AgentDefinition(description="d", prompt=None)},  # type: ignore[arg-type]
            TypeError,
            r"agents\['a'\].prompt must be a str, got None",
        ),
        (
            "agents",
            {"a": AgentDefinition(description="d", prompt="p", maxTurns="3")},  # type: ignore[arg-type]
            TypeError,
            r"agents\['a'\].maxTurns must be an int",
        ),
        # a bare TypeError from str.join: "sequence item 0: expected str instance"
        ("allowed_tools", ["Bash", 1], TypeError, "allowed_tools items must be strings, got 1"),
        ("add_dirs", [b"/tmp"], TypeError, "add_dirs items must be strings"),
        # the CLI never fires an event it does not know: the hooks silently did nothing
        (
            "hooks",
            {"PreTooluse": []},
            ValueError,
            "hooks event 'PreTooluse' is not known to the CLI: did you mean 'PreToolUse'",
        ),
        ("mcp_servers", {"x": {"type": 5}}, ValueError, r"\['type'\] must be a str"),
        ("hooks", {"PreToolUse": HookMatcher(hooks=[_hook])}, TypeError, "must be a list of Hook"),
        # a bare TypeError from the hook registry
        (
            "hooks",
            {"PreToolUse": [_hook]},
            TypeError,
            r"entries must be HookMatcher, not <function _hook at .*>: write "
            r"hooks=\{'PreToolUse': \[HookMatcher\(hooks=\[_hook\]\)\]\}$",
        ),
        ("hooks", {"PreToolUse": [HookMatcher(hooks=[5])]}, TypeError, "is not callable: 5"),  # type: ignore[list-item]
        # a bare TypeError ("'function' object is not iterable"); a pattern the CLI cannot use
        (
            "hooks",
            {"PreToolUse": [HookMatcher(hooks=_hook)]},  # type: ignore[arg-type]
            TypeError,
            r"HookMatcher hooks must be a list of callbacks.*write HookMatcher\(hooks=\[_hook\]\)",
        ),
        (
            "hooks",
            {"PreToolUse": [HookMatcher(matcher=5, hooks=[_hook])]},  # type: ignore[arg-type]
            TypeError,
            "HookMatcher matcher must be a str",
        ),
        # the CLI leaves a config it cannot read out of the session without a word
        ("mcp_servers", {"x": {"type": "stdio"}}, ValueError, "needs a 'command'"),
        ("mcp_servers", {"x": {"command": 5}}, ValueError, "needs a 'command'"),
        ("mcp_servers", {"x": {"command": "srv", "args": "-v"}}, ValueError, "'args'.* a list"),
        ("mcp_servers", {"x": {"command": "srv", "args": [1]}}, ValueError, "'args'.* strings"),
        (
            "mcp_servers",
            {"x": {"command": "srv", "env": {"A": 1}}},
            ValueError,
            "'env'.* str to str",
        ),
        ("mcp_servers", {"x": {"type": "http"}}, ValueError, "needs a 'url'"),
        # the CLI refused these once started (a ProcessError quoting its message)
        (
            "permission_mode",
            "acceptedits",
            ValueError,
            "permission_mode 'acceptedits' is not known to the CLI: did you mean 'acceptEdits'",
        ),
        ("permission_mode", "bypass", ValueError, "did you mean 'bypassPermissions'"),
        ("permission_mode", "Default", ValueError, "did you mean 'default'"),
        # one rule for both: a near miss of a known value is an error naming it
        ("hooks", {"PreToolUsage": []}, ValueError, "did you mean 'PreToolUse'"),
        ("hooks", {"Elicit": []}, ValueError, "did you mean 'Elicitation'"),
        ("permission_mode", "acceptEdit", ValueError, "did you mean 'acceptEdits'"),
        (
            "output_format",
            {"type": "json_schema", "schema": {"type": "objekt"}},
            ValueError,
            r"output_format\['schema'\] is not a valid JSON Schema: \"objekt\".*\(at type\)",
        ),
        (
            "output_format",
            {"type": "json_schema", "schema": {"properties": {"a": {"minimum": "1"}}}},
            ValueError,
            r"not a valid JSON Schema.*\(at properties/a/minimum\)",
        ),
        (
            "output_format",
            {"type": "json_schema", "schema": {"type": "object", "required": "a"}},
            ValueError,
            r"not a valid JSON Schema: \"a\" is not of type \"array\" \(at required\)",
        ),
        ("output_format", {"type": "json_schema", "schema": "object"}, ValueError, "a dict"),
        ("settings", "{not json}", ValueError, "settings is JSON text .* not valid JSON"),
        ("settings", ' {"a": 1,} ', ValueError, "settings is JSON text .* not valid JSON"),
        ("settings", ["model"], TypeError, "settings must be a str .* or a dict, not list"),
        ("extra_args", {1: "x"}, TypeError, "extra_args keys must be flag names.*got 1"),
        ("extra_args", {"--": None}, TypeError, "extra_args keys must be flag names"),
        ("extra_args", {"add-dir": ["/a", "/b"]}, TypeError, r"extra_args\['add-dir'\] must be"),
        ("extra_args", {"x": b"v"}, TypeError, r"extra_args\['x'\] must be a str"),
        ("mcp_servers", {"x": {"type": "sse", "url": 5}}, ValueError, "needs a 'url'"),
        (
            "mcp_servers",
            {"x": {"type": "http", "url": "u", "headers": {"A": None}}},
            ValueError,
            "'headers'",
        ),
    ],
)
def test_an_option_of_the_wrong_type_is_refused_at_construction(
    name: str, value: object, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match) as caught:
        ClaudeAgentOptions(**{name: value})  # type: ignore[arg-type]
    assert isinstance(caught.value, ccwire.OptionsError)  # a typed error, naming the option
    options = ClaudeAgentOptions()
    setattr(options, name, value)  # the options are mutable: checked again at connect
    with pytest.raises(ccwire.OptionsError, match=match):
        build_argv(options, cli_path="claude", spill_dir=None)


def test_a_hook_event_or_mcp_type_a_newer_cli_may_know_passes_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # a newer CLI may fire events, take modes, or read server types this ccwire does not
    # list: values near no known one are passed on as the reference passes them, with a
    # warning
    with caplog.at_level("WARNING", logger="ccwire"):
        options = ClaudeAgentOptions(
            hooks={"OnQuantumLeap": [HookMatcher(hooks=[_hook])]},  # type: ignore[dict-item]
            mcp_servers={"x": {"type": "grpc", "url": "u"}},  # type: ignore[misc,dict-item]
            permission_mode="delegate",  # type: ignore[arg-type]
        )
        argv = build_argv(options, cli_path="claude", spill_dir=None)
    assert "grpc" in " ".join(argv)
    text = caplog.text
    assert "hooks event 'OnQuantumLeap' is not known to this ccwire (ccwire.HOOK_EVENTS" in text
    assert "mcp_servers['x'] has type 'grpc', which this ccwire does not know" in text
    assert "permission_mode 'delegate' is not known to this ccwire (it knows 'default'" in text
    assert "did you mean" not in text
    assert "--permission-mode=delegate" in argv


@pytest.mark.anyio
async def test_a_value_a_newer_cli_may_know_is_warned_about_once_per_options_object(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # checked when the options are built and again at connect: one warning for each
    # value, however many sessions the options start; a value set later is warned about
    options = ClaudeAgentOptions(
        hooks={"OnQuantumLeap": [HookMatcher(hooks=[_hook])]},  # type: ignore[dict-item]
        mcp_servers={"x": {"type": "grpc", "url": "u"}},  # type: ignore[misc,dict-item]
        permission_mode="delegate",  # type: ignore[arg-type]
        cli_path=python_wrapper(tmp_path / "claude", MINI_CLI),
        cwd=str(tmp_path),
    )

    async def run() -> None:
        with anyio.fail_after(30):
            messages = [m async for m in ccwire.query(prompt="hi", options=options)]
        assert isinstance(messages[-1], ccwire.ResultMessage)

    def count(text: str) -> int:
        return sum(text in record.getMessage() for record in caplog.records)

    with caplog.at_level("WARNING", logger="ccwire"):
        await run()
        await run()
        options.permission_mode = "bogus"  # type: ignore[assignment]
        await run()
    assert count("permission_mode 'delegate' is not known to this ccwire") == 1
    assert count("hooks event 'OnQuantumLeap' is not known to this ccwire") == 1
    assert count("mcp_servers['x'] has type 'grpc', which this ccwire does not know") == 1
    assert count("permission_mode 'bogus' is not known to this ccwire") == 1


def test_an_option_error_is_a_ccwire_error_and_what_the_reference_raises() -> None:
    # one tree rooted at CcwireError, and still caught by the reference's except clauses
    for bad in ({"allowed_tools": "Bash"}, {"max_turns": -1}, {"env": ["A=1"]}):
        with pytest.raises(ccwire.OptionsError) as caught:
            ClaudeAgentOptions(**bad)
        assert isinstance(caught.value, ccwire.CcwireError)
        assert isinstance(caught.value, TypeError) and isinstance(caught.value, ValueError)
    with pytest.raises(ccwire.OptionsError, match="mutually exclusive"):
        ClaudeAgentOptions(can_use_tool=print, permission_prompt_tool_name="p")  # type: ignore[arg-type]


def test_the_right_shapes_pass() -> None:
    options = ClaudeAgentOptions(
        tools={"type": "preset", "preset": "claude_code"},
        allowed_tools=["Read", "Bash"],
        add_dirs=[Path("/tmp")],
        mcp_servers=Path("/etc/mcp.json"),
        max_turns=1,
        stderr=print,
        # what the CLI takes: "manual" is its name for "default"; draft 7's tuple items
        permission_mode="manual",  # type: ignore[arg-type]
        output_format={
            "type": "json_schema",
            "schema": {"type": "array", "items": [{"type": "string"}], "maxItems": 1},
        },
        settings=' {"model": "opus"} ',
        extra_args={"max-thinking-tokens": 2048, "debug": None, "offset": "-3", "verbose": True},  # type: ignore[dict-item]
    )
    argv = build_argv(options, cli_path="claude", spill_dir=None)
    assert "--allowedTools=Read,Bash" in argv
    assert "--add-dir=/tmp" in argv
    assert "--permission-mode=manual" in argv
    assert argv[argv.index("--settings") + 1] == ' {"model": "opus"} '
    for mode in get_args(PermissionMode):
        assert ClaudeAgentOptions(permission_mode=mode).permission_mode == mode
    schemas: list[Any] = [
        True,
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
        {"$schema": "https://json-schema.org/draft/2020-12/schema", "prefixItems": [{}]},
        {"type": "object", "properties": {"a": {"type": ["string", "null"]}}},
    ]
    for schema in schemas:
        ClaudeAgentOptions(output_format={"type": "json_schema", "schema": schema})
    path: Any = Path("conf/s.json")  # as the reference takes it
    argv = build_argv(ClaudeAgentOptions(settings=path), cli_path="claude")
    assert argv[argv.index("--settings") + 1] == "conf/s.json"


def test_skills_string_must_be_all() -> None:
    with pytest.raises(ValueError, match="'all'"):
        ClaudeAgentOptions(skills="some")  # type: ignore[arg-type]
    assert ClaudeAgentOptions(skills="all").skills == "all"


@pytest.mark.parametrize(
    "name", ["", "  ", "a(b)", "a,b", "a*", "/pdf", "bad\nname", "x\x7f", "a)"]
)
def test_invalid_skill_names(name: str) -> None:
    with pytest.raises(ValueError, match="skill name"):
        check_skill_name(name)
    with pytest.raises(ValueError, match="skill name"):
        ClaudeAgentOptions(skills=[name])


@pytest.mark.parametrize("name", ["pdf", "my-plugin:docx", "a b", "ünï"])
def test_valid_skill_names(name: str) -> None:
    check_skill_name(name)
    assert ClaudeAgentOptions(skills=[name]).skills == [name]


def test_agent_definition_defaults_and_is_mutable_as_the_references() -> None:
    agent = AgentDefinition(description="d", prompt="p")
    assert agent.tools is None
    assert agent.permission_mode is None
    agent.prompt = "other"
    agent.maxTurns = 2
    assert agent.prompt == "other" and agent.max_turns == 2


def test_config_typed_dicts_are_plain_dicts() -> None:
    preset: SystemPromptPreset = {"type": "preset", "preset": "claude_code", "append": "x"}
    file: SystemPromptFile = {"type": "file", "path": "p.md"}
    tools: ToolsPreset = {"type": "preset", "preset": "claude_code"}
    sandbox: SandboxSettings = {"enabled": True, "network": {"allowLocalBinding": True}}
    plugin: SdkPluginConfig = {"type": "local", "path": "./plug"}
    thinking: ThinkingConfig = {"type": "enabled", "budget_tokens": 1024}
    fmt: OutputFormat = {"type": "json_schema", "schema": {"type": "object"}}
    o = ClaudeAgentOptions(
        system_prompt=preset,
        tools=tools,
        sandbox=sandbox,
        plugins=[plugin],
        thinking=thinking,
        output_format=fmt,
    )
    assert o.system_prompt == preset
    assert file == {"type": "file", "path": "p.md"}
    assert isinstance(o.sandbox, dict)


def test_hooks_field_accepts_matchers() -> None:
    async def hook(data: Any, tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        return {}

    o = ClaudeAgentOptions(hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[hook])]})
    assert o.hooks is not None
    assert o.hooks["PreToolUse"][0].matcher == "Bash"


@pytest.mark.anyio
async def test_an_agent_or_a_system_prompt_dict_of_the_wrong_shape_names_the_one_to_write() -> None:
    # they said only "agents['x'] must be an AgentDefinition, got {...}" and "unknown
    # system_prompt type None"
    agent: Any = {"description": "Reviews code", "prompt": "You review code."}
    options = ClaudeAgentOptions(agents={"x": agent}, cli_path="/bin/false")
    with pytest.raises(ccwire.OptionsError) as caught:
        async with ccwire.ClaudeSDKClient(options):
            pass  # pragma: no cover
    assert str(caught.value) == (
        f"agents['x'] must be an AgentDefinition, got {agent!r}: write "
        "agents={'x': AgentDefinition(description='...', prompt='...')} "
        "(from ccwire import AgentDefinition)"
    )
    untyped: Any = {"preset": "claude_code"}
    options = ClaudeAgentOptions(system_prompt=untyped, cli_path="/bin/false")
    with pytest.raises(ccwire.OptionsError) as caught:
        async with ccwire.ClaudeSDKClient(options):
            pass  # pragma: no cover
    assert str(caught.value) == (
        "system_prompt {'preset': 'claude_code'} has no known 'type': write a str, or "
        "{'type': 'preset', 'preset': 'claude_code'} (with 'append': str to add to it), "
        "{'type': 'custom', 'prompt': str} or {'type': 'file', 'path': str}"
    )


@pytest.mark.anyio
async def test_a_settings_file_that_is_not_there_is_refused_at_connect(tmp_path: Path) -> None:
    # the CLI refused it once started ("Settings file not found"), as a ProcessError; it
    # is looked for at connect (it may be written after the options), relative to cwd
    options = ClaudeAgentOptions(settings="conf/s.json", cwd=tmp_path, cli_path="/bin/false")
    with pytest.raises(ccwire.OptionsError, match=r"settings 'conf/s.json' is neither a file"):
        async with ccwire.ClaudeSDKClient(options):
            pass
    (tmp_path / "conf").mkdir()
    options.settings = "conf"  # a directory
    with pytest.raises(ccwire.OptionsError, match="there is no file"):
        async with ccwire.ClaudeSDKClient(options):
            pass
    (tmp_path / "conf" / "s.json").write_text("{}")
    options.settings = "conf/s.json"
    check_settings_file(options)
    check_settings_file(ClaudeAgentOptions(settings=' {"model": "opus"} '))
