from typing import Any

import anyio

from ccwire import ClaudeAgentOptions, ClaudeSDKClient, create_sdk_mcp_server, tool


@tool("greet", "Greet someone by name", {"name": str})
async def greet(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"Hello, {args['name']}! Welcome."}]}


async def main() -> None:
    options = ClaudeAgentOptions(
        mcp_servers={"demo_tools": create_sdk_mcp_server("demo_tools", tools=[greet])},
        allowed_tools=["mcp__demo_tools__greet"],
    )
    async with ClaudeSDKClient(options) as client:
        await client.query("Please greet Alice.")
        async for message in client.receive_response():
            print(message)


anyio.run(main)
