"""`python -m exocortex.gateway`: build the settings once, then serve HTTP until signalled."""

import uvicorn

from exocortex.core.logging import configure_logging, get_logger
from exocortex.core.process import event_loop
from exocortex.core.reference_env import note_aliases
from exocortex.gateway.app import create_app
from exocortex.gateway.settings import GatewaySettings


def main() -> None:
    settings = GatewaySettings()
    configure_logging("gateway", fmt=settings.log_format, level=settings.log_level)
    note_aliases(settings, get_logger("exocortex.gateway"))
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=5,
        loop=event_loop(settings.event_loop),
    )


if __name__ == "__main__":
    main()
