"""The SessionStart hook, run as an agent client runs it (the command `exo hooks install` wrote,
in a shell, the hook's JSON on stdin) against the session's real stack, and silent when no stack
answers; and `exo hooks install` for each client, keeping a backup of the config it changes."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from exocortex.cli.hooks.install import CLIENTS, default_path
from exocortex.cli.hooks.session_start import orientation
from exocortex.core.runtime.ports import free_port
from exocortex.testing.wait import until

if TYPE_CHECKING:
    from conftest import Exo


def _installed_command(exo: Exo, home: Path, client: str) -> str:
    result = exo("hooks", "install", client, "--config", str(default_path(client, home)))
    assert result.exit_code == 0, result.output
    config = json.loads(default_path(client, home).read_text())
    (entry,) = config["hooks"]["SessionStart"]
    command: str = entry["hooks"][0]["command"]
    return command


def _run_hook(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        shell=True,
        input=json.dumps({"session_id": "s1", "cwd": str(cwd), "source": "startup"}),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("client", CLIENTS)
def test_install_keeps_the_config_and_a_backup_and_adds_the_hook_once(
    exo: Exo, tmp_path: Path, client: str
) -> None:
    path = default_path(client, tmp_path)
    path.parent.mkdir(parents=True)
    before = {
        "theme": "dark",
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]},
    }
    path.write_text(json.dumps(before))
    command = _installed_command(exo, tmp_path, client)
    assert "session_start.py" in command
    after = json.loads(path.read_text())
    assert after["theme"] == "dark"
    assert after["hooks"]["Stop"] == before["hooks"]["Stop"]
    (backup,) = path.parent.glob(f"{path.name}.bak-*")
    assert json.loads(backup.read_text()) == before
    # A second install changes nothing.
    again = exo("hooks", "install", client, "--config", str(path))
    assert again.exit_code == 0, again.output
    assert "nothing changed" in again.output
    assert len(json.loads(path.read_text())["hooks"]["SessionStart"]) == 1
    if client == "codex":
        assert "codex_hooks = true" in (path.parent / "config.toml").read_text()


def test_install_refuses_a_config_it_cannot_read(exo: Exo, tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{not json")
    result = exo("hooks", "install", "claude-code", "--config", str(path))
    assert result.exit_code == 1
    assert path.read_text() == "{not json"
    assert exo("hooks", "install", "emacs").exit_code == 2


def test_session_start_orients_the_agent_from_the_stack(
    exo: Exo, tmp_path: Path, namespace: str
) -> None:
    project = f"proj{uuid.uuid4().hex[:8]}"
    api = httpx.Client(base_url=exo.url, timeout=60)

    def store(content: str, tags: list[str]) -> str:
        reply = api.post(
            "/api/memories", json={"content": content, "namespace": namespace, "tags": tags}
        )
        assert reply.status_code == 201, reply.text
        memory_id: str = reply.json()["id"]
        return memory_id

    recent = store(f"Work on {project}: the importer now streams its input.", [project])
    decision = store(
        f"Decision for {project}: we keep Postgres as the source of truth.", ["decision"]
    )
    thread = store(f"Todo in {project}: add retries to the uploader.", ["todo"])
    goal = api.post("/api/goals", json={"title": f"Ship {project} 1.0", "namespace": namespace})
    assert goal.status_code == 201, goal.text
    goal_id = goal.json()["id"]
    for title in ("beta", "release"):
        added = api.post(f"/api/goals/{goal_id}/milestones", json={"title": title})
        assert added.status_code == 201, added.text
    first = added.json()["milestones"][0]["id"]
    done = api.patch(f"/api/goals/{goal_id}/milestones/{first}", json={"status": "completed"})
    assert done.status_code == 200, done.text

    command = _installed_command(exo, tmp_path / "home", "claude-code")
    workdir = tmp_path / project
    workdir.mkdir()
    env = {"PATH": "/usr/bin:/bin", "EXO_URL": exo.url, "EXO_HOOK_NAMESPACE": namespace}

    def context() -> str:
        ran = _run_hook(command, workdir, env)
        assert ran.returncode == 0, ran.stderr
        if not ran.stdout.strip():
            return ""
        answer: dict[str, Any] = json.loads(ran.stdout)
        assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        text: str = answer["hookSpecificOutput"]["additionalContext"]
        return text

    text = until(
        context,
        what="the hook names the project's memories",
        accept=lambda t: all(i in t for i in (recent, decision, thread)),
    )
    assert f"Recent memories of {project}" in text
    assert f"Ship {project} 1.0" in text
    assert "milestones 1/2" in text


def test_session_start_is_silent_when_no_stack_answers(exo: Exo, tmp_path: Path) -> None:
    command = _installed_command(exo, tmp_path, "gemini")
    env = {"PATH": "/usr/bin:/bin", "EXO_URL": f"http://127.0.0.1:{free_port()}"}
    ran = _run_hook(command, tmp_path, env)
    assert ran.returncode == 0
    assert ran.stdout == ""
    assert ran.stderr == ""


def test_pending_contradictions_are_named_and_counted() -> None:
    pending = [
        {"memory_a_preview": f"A{n} is on", "memory_b_preview": f"A{n} is off"} for n in range(5)
    ]
    text = orientation("demo", {}, pending)
    assert "Pending contradictions: 5 (showing 3)" in text
    assert "'A0 is on' vs 'A0 is off'" in text
    assert "A4" not in text
    assert orientation("demo", {}, []) == ""
