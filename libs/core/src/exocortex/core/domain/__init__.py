"""Pure domain logic shared by services: no I/O here."""
