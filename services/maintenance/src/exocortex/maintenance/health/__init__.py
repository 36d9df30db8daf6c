"""The eight health checks of a memory store (served by memory_ping and memory_maintenance)."""
