"""`python -m exocortex.embedding`: build the settings once, then run until signalled."""

from exocortex.core.process import run_service
from exocortex.embedding.app import run
from exocortex.embedding.settings import EmbeddingSettings

if __name__ == "__main__":
    run_service("embedding", EmbeddingSettings(), run)
