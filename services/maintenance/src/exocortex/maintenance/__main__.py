"""`python -m exocortex.maintenance`: build the settings once, then run until signalled."""

from exocortex.core.process import run_service
from exocortex.maintenance.app import run
from exocortex.maintenance.settings import MaintenanceSettings

if __name__ == "__main__":
    run_service("maintenance", MaintenanceSettings(), run)
