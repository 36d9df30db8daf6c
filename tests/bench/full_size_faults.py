"""The scale-out and crash-under-load tests at their full sizes: 2,000 stores with replicas
killed half-way (tests/scale/test_replicas.py) and 1,000 stores while every part is killed in
turn (tests/faults/test_crash_under_load.py).

    .venv/bin/python tests/bench/full_size_faults.py [--stores 2000] [--memories 1000]

The suite runs both at the sizes their properties need (200 and 280 stores); this runs the same
tests with more load, for a release or after a change to the write path, the bus or the
supervisor. Extra arguments go to pytest. Exits with pytest's status.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ["tests/scale/test_replicas.py", "tests/faults/test_crash_under_load.py"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", type=int, default=2_000, help="replica test stores")
    parser.add_argument("--memories", type=int, default=1_000, help="crash test stores")
    args, rest = parser.parse_known_args()
    env = os.environ | {
        "EXO_TEST_REPLICA_STORES": str(args.stores),
        "EXO_TEST_CRASH_MEMORIES": str(args.memories),
    }
    command = [sys.executable, "-m", "pytest", "-s", "--durations=0", *TESTS, *rest]
    return subprocess.run(command, cwd=ROOT, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
