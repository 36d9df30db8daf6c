"""Settings changes over core NATS: a process that wrote the ``settings`` table announces it on
``settings.changed``; every process's settings cache drops its values when it hears that, and
answers on ``settings.applied`` with its service's name, so whoever changed a setting can tell
when each service reads it (a test, an operator watching the subject)."""

from __future__ import annotations

from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg

from exocortex.core.bus import subjects
from exocortex.core.logging import get_logger
from exocortex.core.settings_cache import SettingsCache

log = get_logger(__name__)


async def announce_change(nc: NatsClient) -> None:
    """Tell every process that the settings changed. Never raises: the change is stored, and
    the other caches expire within their TTL anyway."""
    try:
        await nc.publish(subjects.SETTINGS_CHANGED, b"")
        await nc.flush(timeout=2)
    except Exception as exc:
        log.warning("settings.changed not sent", error=str(exc) or type(exc).__name__)


async def follow(nc: NatsClient, cache: SettingsCache, service: str) -> None:
    """Keep ``cache`` in step with announced changes, and let its ``changed`` announce (the
    client keeps the subscription across reconnects)."""

    async def heard(_msg: Msg) -> None:
        cache.invalidate()
        try:
            await nc.publish(subjects.SETTINGS_APPLIED, service.encode())
        except Exception as exc:  # the change is applied here; only the answer is lost
            log.warning("settings.applied not sent", error=str(exc) or type(exc).__name__)

    async def announce() -> None:
        await announce_change(nc)

    cache.announce_with(announce)
    await nc.subscribe(subjects.SETTINGS_CHANGED, cb=heard)
