"""Free ports: one handed out by a live process is never handed out by another, even once the
server it was meant for has exited and freed it (a killed service comes back on its port)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from exocortex.core.runtime import ports

HOLDER = textwrap.dedent(
    """
    import sys
    from exocortex.core.runtime.ports import free_port
    print(free_port(), flush=True)
    sys.stdin.read()  # hold it until told to exit
    """
)


def test_a_port_another_live_process_handed_out_is_not_handed_out_again() -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        held = int(holder.stdout.readline())
        # Nothing listens on it: only the registry keeps it apart.
        assert ports._claim(held) is False
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    # Its holder is gone: free for anyone again.
    assert ports._claim(held) is True


def test_ports_handed_out_here_are_distinct_and_bindable() -> None:
    handed = [ports.free_port() for _ in range(50)]
    assert len(set(handed)) == len(handed)
    assert all(ports._LOW <= p <= ports._HIGH for p in handed)
