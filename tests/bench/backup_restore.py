"""Size and time of an encrypted backup of 100k memories, its verification and its restore.

    .venv/bin/python tests/bench/backup_restore.py [--memories 100000]

Seeds a store straight in SQL (as tests/bench/analytics_latency.py does), then through the
code the services run: the export (retrieval's export service, one snapshot, batches of 500)
into the encrypted backup (JSON Lines, AES-256-GCM chunks, scrypt key), the verification of
the whole file, and the restore into a second, empty database. The restore's embedding calls
go to a stand-in that returns zero vectors at once, so the figure is the restore's own work;
re-embedding 100k memories costs what the embedding service's bulk rate says (see
docs/benchmarks). Prints sizes, times and the row counts on both sides.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analytics_latency import seed  # type: ignore[import-not-found]

from exocortex.core.backup_format import crypto, document
from exocortex.core.db import migrate
from exocortex.core.db.pool import open_pool
from exocortex.core.runtime.postgres import EmbeddedPostgres
from exocortex.maintenance.backup.restore import Restorer, items_of
from exocortex.maintenance.backup.service import verify_file
from exocortex.retrieval.reads.export import ExportService

PASS = "bench passphrase"
TABLES = ("memories", "memory_tags", "memory_usage", "memory_links")


class ZeroEmbedding:
    """Stands in for the embedding service: the model's time is measured elsewhere."""

    fingerprint = "current-model"

    async def model_info(self) -> None:
        return None

    async def embed(self, texts: list[str], **_: Any) -> list[np.ndarray]:
        return [np.zeros(384, dtype=np.float32) for _ in texts]


async def backup(dsn: str, path: Path) -> tuple[float, dict[str, int], int]:
    pool = await open_pool(dsn, max_size=1)
    started = time.perf_counter()
    plain = 0
    try:
        with path.open("wb") as out:
            writer = crypto.EncryptingWriter(out, PASS)

            def sink(data: bytes) -> None:
                nonlocal plain
                plain += len(data)
                writer.write(data)

            doc = document.DocumentWriter(sink, {"exported_at": "bench", "namespace": None})
            async for section, items in ExportService(pool).batches("", 500):
                doc.batch(section, items)
            counts = doc.finish()
            writer.close()
    finally:
        await pool.close()
    return time.perf_counter() - started, counts, plain


async def restore(dsn: str, path: Path) -> tuple[float, dict[str, Any]]:
    pool = await open_pool(dsn, max_size=1)
    started = time.perf_counter()
    try:
        with path.open("rb") as source:
            items = items_of(crypto.decrypt_chunks(source, PASS))
            report = await Restorer(pool, ZeroEmbedding()).restore(  # type: ignore[arg-type]
                items, dry_run=False
            )
    finally:
        await pool.close()
    return time.perf_counter() - started, {k: v.created for k, v in report.sections.items()}


def counts(dsn: str) -> dict[str, int]:
    with psycopg.connect(dsn) as conn:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}  # type: ignore[index]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="exo-backup-bench-") as tmp:
        server = EmbeddedPostgres(Path(tmp) / "data", fsync=False)
        with server:
            source = server.dsn_for("postgres")
            migrate.upgrade(source)
            print(f"seeded {args.memories:,} memories in {seed(source, args.memories):.0f} s")
            with psycopg.connect(source, autocommit=True) as conn:
                conn.execute("CREATE DATABASE restored")
            target = server.dsn_for("restored")
            migrate.upgrade(target)
            path = Path(tmp) / "bench.exobak"
            took, written, plain = asyncio.run(backup(source, path))
            size = path.stat().st_size
            print(
                f"backup: {took:.1f} s, {size / 2**20:.1f} MiB encrypted "
                f"({plain / 2**20:.1f} MiB of JSON Lines), {written['memories']:,} memories"
            )
            started = time.perf_counter()
            report = verify_file(path, PASS)
            print(f"verify: {time.perf_counter() - started:.1f} s, ok={report.ok}")
            took, created = asyncio.run(restore(target, path))
            print(f"restore: {took:.1f} s, created {created.get('memories', 0):,} memories")
            before, after = counts(source), counts(target)
            print(f"rows before {before}\nrows after  {after}")
            print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
            return 0 if before == after and report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
