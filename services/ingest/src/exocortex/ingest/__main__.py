"""`python -m exocortex.ingest`: build the settings once, then run until signalled."""

from exocortex.core.process import run_service
from exocortex.ingest.app import run
from exocortex.ingest.settings import IngestSettings

if __name__ == "__main__":
    run_service("ingest", IngestSettings(), run)
