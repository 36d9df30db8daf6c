"""Records the side effects of searches (``events``) with one statement per kind
(``repository``)."""

from exocortex.maintenance.recorder.events import SearchRecorder
from exocortex.maintenance.recorder.repository import record_feedback

__all__ = ["SearchRecorder", "record_feedback"]
