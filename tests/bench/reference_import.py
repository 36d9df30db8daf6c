"""Import rate of a reference product database through ``exo import``.

    .venv/bin/python tests/bench/reference_import.py [--url http://127.0.0.1:3210]
        [--memories 10000] [--in-flight 1 3] [--batch 100]

For each --in-flight value, builds a reference-shaped SQLite database
(``exocortex.testing.reference``: every kind of object, plus short plain notes up to
--memories), imports it with ``exo import DB -n <fresh namespace> --json`` in a subprocess and
reports:

* the wall time of the import and its rate (memories a second; every memory embedded again);
* the time until the last memory is searchable (the indexes follow the committed rows);
* the wall time of the same import run again (nothing to write: the idempotent re-run).

Without --url it starts its own stack (as `exo up` does) in a temporary directory. Prints a
Markdown table (--json PATH keeps the raw figures).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from exocortex.testing import reference


def exo_import(url: str, db: Path, namespace: str, in_flight: int, batch: int) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "exocortex.cli", "--url", url, "import", str(db),
        "-n", namespace, "--json", "--in-flight", str(in_flight), "--batch-size", str(batch),
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"exo import failed ({done.returncode}): {done.stderr[-2000:]}")
    summary: dict[str, Any] = json.loads(done.stdout)
    return {"seconds": seconds, "summary": summary}


def searchable_after(url: str, namespace: str, token: str, since: float) -> float:
    """Seconds from ``since`` until a search for ``token`` finds it (polled)."""
    deadline = time.monotonic() + 1800
    with httpx.Client(base_url=url, timeout=60) as client:
        while time.monotonic() < deadline:
            reply = client.post(
                "/api/memories/search",
                json={"query": token, "namespace": namespace, "limit": 3, "compact": True},
            )
            if reply.status_code == 200 and reply.json()["results"]:
                return time.perf_counter() - since
            time.sleep(0.2)
    raise SystemExit(f"{token} was not searchable within 30 minutes")


def measure(url: str, folder: Path, args: argparse.Namespace) -> list[Any]:
    rows = []
    for in_flight in args.in_flight:
        # A database of its own each time: ids are kept, so the same one would be "already here".
        db = folder / f"exocortex-{in_flight}.db"
        ref = reference.build(db, extra_memories=max(args.memories - 14, 0))
        last = max(ref.tokens)  # the newest memory (ULIDs sort by time)
        namespace = f"bench-ref-{uuid.uuid4().hex[:8]}"
        started = time.perf_counter()
        first = exo_import(url, db, namespace, in_flight, args.batch)
        searchable = searchable_after(url, namespace, ref.tokens[last], started)
        again = exo_import(url, db, namespace, in_flight, args.batch)
        memories = ref.counts["memories"]
        rows.append(
            {
                "in_flight": in_flight,
                "memories": memories,
                "import_seconds": round(first["seconds"], 1),
                "rate": round(memories / first["seconds"], 1),
                "searchable_seconds": round(searchable, 1),
                "rerun_seconds": round(again["seconds"], 1),
                "created": first["summary"]["sections"]["memories"].get("created", 0),
                "rerun_created": again["summary"]["sections"]["memories"].get("created", 0),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url")
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--in-flight", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="exo-bench-ref-") as tmp:
        if args.url:
            rows = measure(args.url.rstrip("/"), Path(tmp), args)
        else:
            from exocortex.core.runtime.stack import Stack, StackConfig

            stack = Stack(StackConfig.with_free_ports(Path(tmp) / "stack", postgres_fsync=False))
            stack.start(timeout=300)
            try:
                rows = measure(stack.gateway_url, Path(tmp), args)
            finally:
                stack.stop()
    print(f"\n{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs\n")
    print("| in flight | memories | import s | memories/s | searchable after s | re-run s |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['in_flight']} | {r['memories']} | {r['import_seconds']} | {r['rate']} | "
            f"{r['searchable_seconds']} | {r['rerun_seconds']} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
