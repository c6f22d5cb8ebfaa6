"""Remote workspaces: the ``serve --stdio`` JSON-RPC server, its client, its watcher."""
