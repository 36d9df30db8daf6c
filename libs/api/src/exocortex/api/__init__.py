"""The REST API's request and response schemas and their limits, declared once.

The gateway serves them (they are its OpenAPI document); the MCP adapter builds its tool
arguments from the same vocabularies and limits, so the two cannot drift apart.
"""
