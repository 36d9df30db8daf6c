"""The enrichment service's frame: Postgres, NATS, health and metrics.

Entity extraction, relation discovery, goal links and contradiction candidates arrive with the
write-path work; until then this process only proves its connections and reports health.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

from exocortex.core.logging import get_logger
from exocortex.core.worker import open_worker
from exocortex.enrichment.settings import EnrichmentSettings

log = get_logger(__name__)


async def run(settings: EnrichmentSettings, stop: asyncio.Event) -> None:
    async with AsyncExitStack() as stack:
        await open_worker(stack, "enrichment", settings)
        log.info("enrichment ready (no enrichers enabled yet)")
        await stop.wait()
