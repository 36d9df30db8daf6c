"""`python -m exocortex.enrichment`: build the settings once, then run until signalled."""

from exocortex.core.process import run_service
from exocortex.enrichment.app import run
from exocortex.enrichment.settings import EnrichmentSettings

if __name__ == "__main__":
    run_service("enrichment", EnrichmentSettings(), run)
