"""Exocortex test harness: a pytest plugin that starts real backing servers.

Installed with the `exocortex-testing` distribution, the plugin (`exocortex.testing.plugin`)
is registered through the `pytest11` entry point, so its fixtures are available everywhere.
"""
