"""`python -m exocortex.retrieval`: build the settings once, then run until signalled."""

from exocortex.core.process import run_service
from exocortex.retrieval.app import run
from exocortex.retrieval.settings import RetrievalSettings

if __name__ == "__main__":
    run_service("retrieval", RetrievalSettings(), run)
