"""Whether a process runs, as a supervisor needs to know it."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def process_alive(pid: int) -> bool:
    """Whether the process runs. A zombie (exited, not yet reaped by its parent) counts as
    dead: a killed server started through ``pg_ctl`` is not our child, and lingers as one until
    whoever inherited it reaps it, which on a busy machine or under a lax init can take long."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, run by another account (the server's own when we are root)
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return sys.platform != "linux"  # no /proc to ask: kill() said it is there
    # The state follows the command name, which is in parentheses and may hold spaces.
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")
