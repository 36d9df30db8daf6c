"""How long the SessionStart hook takes, run as an agent client runs it (a new process, the
hook's JSON on stdin), on a warm stack and with no stack at all.

    .venv/bin/python tests/bench/session_hook.py [--gateway-url URL] [--runs 30]

Uses the stack at --gateway-url, or starts its own on free ports (as `exo up` does), stores a
project's worth of memories and a goal with milestones, then runs the hook `--runs` times after
five warm-up runs. Prints the median and p90 in milliseconds, and the same against a port
nobody listens on (the hook must stay silent and quick there too).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

from exocortex.cli.hooks.install import hook_command
from exocortex.core.runtime.ports import free_port
from exocortex.core.runtime.stack import Stack, StackConfig

WARM_UP = 5


def seed(url: str, project: str, namespace: str) -> None:
    with httpx.Client(base_url=url, timeout=60) as api:
        for n, tags in enumerate((["todo"], ["decision"], [project], ["plan"], [project])):
            body = {"content": f"{project} note {n}: the importer", "namespace": namespace}
            api.post("/api/memories", json={**body, "tags": tags}).raise_for_status()
        goal = api.post("/api/goals", json={"title": f"Ship {project}", "namespace": namespace})
        goal.raise_for_status()
        for title in ("beta", "release"):
            api.post(
                f"/api/goals/{goal.json()['id']}/milestones", json={"title": title}
            ).raise_for_status()


def timed_runs(url: str, project_dir: Path, namespace: str, runs: int) -> tuple[list[float], int]:
    env = {"PATH": "/usr/bin:/bin", "EXO_URL": url, "EXO_HOOK_NAMESPACE": namespace}
    event = json.dumps({"cwd": str(project_dir), "source": "startup"})
    times: list[float] = []
    chars = 0
    for _ in range(WARM_UP + runs):
        started = time.perf_counter()
        done = subprocess.run(
            hook_command(), shell=True, input=event, capture_output=True, text=True, env=env
        )
        times.append((time.perf_counter() - started) * 1000)
        chars = len(done.stdout)
    return times[WARM_UP:], chars


def summary(label: str, times: list[float], chars: int) -> str:
    p90 = sorted(times)[int(0.9 * (len(times) - 1))]
    return f"{label}: median {statistics.median(times):.0f} ms, p90 {p90:.0f} ms, {chars} chars"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gateway-url")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    project = f"hookbench{uuid.uuid4().hex[:6]}"
    namespace = f"bench-{project}"
    with tempfile.TemporaryDirectory() as tmp:
        project_dir = Path(tmp) / project
        project_dir.mkdir()
        stack = None
        url = args.gateway_url
        if not url:
            stack = Stack(StackConfig.with_free_ports(Path(tmp) / "data"))
            stack.start(timeout=300)
            url = stack.gateway_url
        try:
            seed(url, project, namespace)
            warm, chars = timed_runs(url, project_dir, namespace, args.runs)
            print(summary("warm stack", warm, chars))
            down, quiet = timed_runs(f"http://127.0.0.1:{free_port()}", project_dir, namespace, 10)
            print(summary("no stack", down, quiet))
        finally:
            if stack is not None:
                stack.stop()


if __name__ == "__main__":
    sys.exit(main())
