"""The agent tools, grouped by what they touch. Each module has ``register(server)``."""
