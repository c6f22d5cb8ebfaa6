"""``context-engine install|uninstall|doctor``: our hooks and MCP server in the agents' files."""
