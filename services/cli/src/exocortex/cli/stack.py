"""The supervisor moved to ``exocortex.core.runtime.stack`` (a library the tests share with
``exo``); this name stays only until the last callers import it from there."""

from exocortex.core.runtime.stack import (
    MAX_RESTARTS,
    SERVICES,
    Stack,
    StackConfig,
    StackError,
)

__all__ = ["MAX_RESTARTS", "SERVICES", "Stack", "StackConfig", "StackError"]
