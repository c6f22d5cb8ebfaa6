"""Services: background tasks, the file watcher bridge and the change hub."""
