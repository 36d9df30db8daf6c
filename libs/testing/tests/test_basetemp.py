"""Each test session keeps its temporary files in a folder of its own, so a second test run
started meanwhile cannot reset or prune the folder a running embedded server lives in."""

from __future__ import annotations

import getpass
import subprocess
import sys
from pathlib import Path

INNER_TEST = "def test_where(tmp_path):\n    print('\\nTMP=' + str(tmp_path))\n"


def _inner_session(folder: Path, *args: str) -> Path:
    """Run a one-test session in `folder` (the project's plugin loads as it always does) and
    return the tmp_path its test was given."""
    (folder / "test_inner.py").write_text(INNER_TEST)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-s", "-q", "-p", "no:cacheprovider", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("TMP=")]
    assert len(lines) == 1, done.stdout
    return Path(lines[0].removeprefix("TMP="))


def test_a_session_has_a_temporary_folder_of_its_own_and_leaves_none(tmp_path: Path) -> None:
    used = _inner_session(tmp_path)
    assert used.parent.name.startswith("exo-pytest-"), used
    assert f"pytest-of-{getpass.getuser()}" not in used.parts
    assert not used.parent.exists()  # removed when the session ended


def test_a_given_basetemp_is_used_as_given(tmp_path: Path) -> None:
    given = tmp_path / "given"
    (tmp_path / "run").mkdir()
    used = _inner_session(tmp_path / "run", f"--basetemp={given}")
    assert used == given / "test_where0"
    assert used.exists()  # pytest keeps a folder it was given
