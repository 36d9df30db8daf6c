"""Bringing a memory kept by the reference product into this one: its SQLite database (or one of
its ``VACUUM INTO`` backups), its version 1 JSON export and its encrypted ``.enc`` export are read
(``sources``) and converted to this project's version 2 export document (``convert``), which
``POST /api/memories/import`` restores exactly. See docs/migrating.md for what maps to what."""
