"""The encrypted backup file format (EXOBAK) and the JSON Lines document inside it: written and
restored by the maintenance service, verified there and by exo on a local file."""
