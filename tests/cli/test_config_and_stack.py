"""Where exo finds its gateway, what it says when there is none, and the stack commands that
need no running stack of their own (status, down of a background process, doctor, version,
shell completion)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

from exocortex.cli import pidfile
from exocortex.cli.config import DEFAULT_URL, ConfigError, resolve
from exocortex.cli.main import app
from exocortex.core.runtime.ports import free_port

if TYPE_CHECKING:
    from conftest import Exo


def test_flag_beats_config_file_beats_default(isolated_config: Path) -> None:
    assert resolve(None, None).url == DEFAULT_URL
    isolated_config.write_text('url = "http://10.0.0.5:3210/"\napi_key = "from-file"\n')
    from_file = resolve(None, None)
    assert (from_file.url, from_file.api_key) == ("http://10.0.0.5:3210", "from-file")
    flagged = resolve("http://127.0.0.1:9999", "from-flag")
    assert (flagged.url, flagged.api_key) == ("http://127.0.0.1:9999", "from-flag")


def test_broken_config_file_names_the_file_and_the_fix(isolated_config: Path) -> None:
    isolated_config.write_text("url = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        resolve(None, None)
    isolated_config.write_text('colour = "blue"\n')
    result = CliRunner().invoke(app, ["stats"])
    assert result.exit_code == 1
    assert "unknown key 'colour'" in result.stderr


def test_environment_gives_url_and_nothing_listening_says_start_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EXO_URL", f"http://127.0.0.1:{free_port()}")
    result = CliRunner().invoke(app, ["search", "anything"])
    assert result.exit_code == 1
    assert "cannot reach the gateway" in result.stderr
    assert "exo up" in result.stderr


def test_status_reports_every_part_of_a_running_stack(exo: Exo) -> None:
    report = exo.json("status")
    assert report["health"]["status"] == "ok"
    assert {"postgres", "ingest", "retrieval"} <= set(report["health"]["dependencies"])
    assert exo("status").exit_code == 0


def test_status_without_a_stack_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXO_URL", f"http://127.0.0.1:{free_port()}")
    result = CliRunner().invoke(app, ["status"])
    assert result.exit_code == 1
    assert "exo up" in result.stderr


def test_down_stops_the_background_process_named_by_the_pid_file() -> None:
    data = pidfile.data_dir()
    data.mkdir(parents=True)
    process = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
    )
    try:
        record = pidfile.Running(process.pid, "http://127.0.0.1:1", "", str(data), "now")
        pidfile.write(record, data)
        assert pidfile.read() == record
        result = CliRunner().invoke(app, ["down", "--timeout", "10"])
        assert result.exit_code == 0, result.output
        assert process.wait(timeout=10) == -15  # SIGTERM, the clean stop `exo up` handles
        assert pidfile.read() is None
    finally:
        if process.poll() is None:
            process.kill()
    again = CliRunner().invoke(app, ["down"])
    assert again.exit_code == 0
    assert "not running" in again.stderr


def test_stale_pid_file_is_not_taken_for_a_running_stack() -> None:
    data = pidfile.data_dir()
    data.mkdir(parents=True)
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    pidfile.write(pidfile.Running(finished.pid, "http://x", "", "", "then"), data)
    assert pidfile.read() is None
    assert not pidfile.path().exists()


def test_doctor_checks_install_data_model_and_server(exo: Exo) -> None:
    result = exo("doctor", "--json")
    checks = {c["name"]: c for c in json.loads(result.stdout)}
    assert {"python", "install", "data folder", "model", "gateway", "api key"} <= set(checks)
    assert checks["gateway"]["state"] == "ok"
    assert checks["install"]["state"] == "ok"
    failed = [c for c in checks.values() if c["state"] == "fail"]
    # Any failure (a port another program holds, say) carries what to do about it, and fails
    # the command.
    assert all(c["fix"] for c in failed)
    assert result.exit_code == (1 if failed else 0)
    assert checks["api key"]["state"] == "ok"


def test_version_and_help_read_well() -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["version"]).stdout.strip() == "0.1.0"
    helped = runner.invoke(app, ["--help"])
    assert helped.exit_code == 0
    for command in ("add", "search", "import", "export", "goals", "doctor", "status", "down"):
        assert command in helped.stdout
    assert runner.invoke(app, ["no-such-command"]).exit_code == 2


def test_shell_completion_completes_command_names() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "exocortex.cli"],
        env={**os.environ, "_EXO_COMPLETE": "complete_bash", "COMP_WORDS": "exo se",
             "COMP_CWORD": "1"},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    offered = completed.stdout.replace(",", " ").split()
    assert "search" in offered, completed.stdout
    assert "settings" in offered, completed.stdout
    # Only names that complete "se": a command with another prefix is not offered.
    assert "add" not in offered, completed.stdout


def test_up_refuses_a_second_stack_on_the_same_data_folder() -> None:
    data = pidfile.data_dir()
    data.mkdir(parents=True)
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        pidfile.write(pidfile.Running(process.pid, "http://127.0.0.1:1", "", "", "now"), data)
        refused = CliRunner().invoke(app, ["up", "--detach"])
        assert refused.exit_code == 1
        assert "already runs" in refused.stderr
        assert f"pid {process.pid}" in refused.stderr
    finally:
        process.kill()
        process.wait()
