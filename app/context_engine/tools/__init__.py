"""The agent-facing tools: ``memory`` (read), ``remember`` and ``forget`` (S9), and the MCP server.

``spec`` holds the fixed tool descriptions and schemas, ``memory`` the read-only search tool,
``write`` the two write tools (they build an op and hand it to the catalog's one door), and
``mcp_server`` serves all three to an agent over MCP.
"""
