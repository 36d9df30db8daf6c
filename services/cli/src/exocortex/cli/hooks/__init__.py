"""Agent hooks: scripts an agent client runs at points of a session, and their installation."""
