"""The container, without a Docker engine: the Dockerfile and docker-compose.yml are read and checked, and the
image's command runs as-is with the image's environment (its /data volume remapped to a temporary folder) in this
virtual environment, against a fake Slack; its HEALTHCHECK command is what decides it is up; SIGTERM stops it
cleanly (exit 0)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest
import yaml

from bot.config.settings import Settings
from bot.conversations.sqlite import SQLiteConversationStore
from rag.mongo.config import describe_hosts
from tests.fakes.fake_models import FakeGemini
from tests.fakes.fake_slack import BOT_USER_ID, TEAM_ID, BackgroundLoop, FakeSlack
from tests.project.test_lock_files import DEV_LOCK, RUNTIME_LOCK, declared, read_lock, uncovered

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
COMPOSE = ROOT / "docker-compose.yml"
DOCKERIGNORE = ROOT / ".dockerignore"
SOURCES = ("bot", "rag", "adapters")


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    found: list[tuple[str, str]] = []
    pending = ""
    for raw in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        keyword, _, rest = whole.partition(" ")
        found.append((keyword.upper(), rest.strip()))
    return found


def the(keyword: str) -> list[str]:
    return [rest for kw, rest in instructions() if kw == keyword]


def env_of_image() -> dict[str, str]:
    env: dict[str, str] = {}
    for rest in the("ENV"):
        for pair in shlex.split(rest):
            name, _, value = pair.partition("=")
            env[name] = value
    return env


def healthcheck_command() -> list[str]:
    [rest] = the("HEALTHCHECK")
    command = rest[rest.index("CMD ") + 4:].strip()
    return list(json.loads(command))  # exec form: no shell in the way


# --- the Dockerfile --------------------------------------------------------------------------------------------------

def test_dockerfile_base_user_volume_port_healthcheck_and_command() -> None:
    assert the("FROM") == ["python:3.12-slim"]
    users = the("USER")
    assert users and users[-1] not in ("root", "0"), "the bot must not run as root"
    assert any(users[-1] in run and "useradd" in run for run in the("RUN")), "the user is created"
    assert json.loads(the("CMD")[0]) == ["navibot", "serve"]
    assert the("VOLUME") == ["/data"] and env_of_image()["NAVIBOT_DATA_DIR"] == "/data"
    assert the("EXPOSE") == [env_of_image().get("NAVIBOT_PORT", "8080")] == ["8080"]
    check = healthcheck_command()
    assert check[0] == "python" and "/healthz" in check[-1] and "urllib" in check[-1]
    assert not any(tool in " ".join(check) for tool in ("curl", "wget")), "slim has neither"


def pip_installs() -> list[tuple[int, list[str]]]:
    """(step index, arguments after `pip install`) of every `pip install` in a RUN step."""
    found = []
    for i, (kw, rest) in enumerate(instructions()):
        if kw != "RUN":
            continue
        for command in re.split(r"&&|;", rest):
            words = shlex.split(command)
            if words[:2] == ["pip", "install"] or words[1:4] == ["-m", "pip", "install"]:
                found.append((i, words[words.index("install") + 1:]))
    return found


def test_dependencies_are_a_layer_keyed_on_the_lock_file_alone() -> None:
    """The first `pip install` installs a lock file in hash-checking mode, and only lock files are copied before
    it: a source edit does not rebuild the dependency layer. The project comes after, without its dependencies."""
    steps = instructions()
    copies = [(i, shlex.split(rest)[:-1]) for i, (kw, rest) in enumerate(steps) if kw in ("COPY", "ADD")]
    (deps_step, deps_args), (project_step, project_args), *_ = pip_installs()
    assert "--require-hashes" in deps_args
    lock_name = deps_args[deps_args.index("-r") + 1]
    copied_before = {src for i, sources in copies if i < deps_step for src in sources}
    assert lock_name in copied_before and copied_before <= {RUNTIME_LOCK.name, DEV_LOCK.name}, copied_before
    # The lock the image installs is the one tests/project/test_lock_files.py keeps in step with pyproject.toml.
    pins = read_lock(ROOT / lock_name)
    assert uncovered(declared(tomllib.loads((ROOT / "pyproject.toml").read_text())), pins) == []
    assert "--no-deps" in project_args and project_step > deps_step
    # Without build isolation the build backend is the locked one, not a fresh unpinned download.
    assert "--no-build-isolation" in project_args and "setuptools" in pins
    copied = {src for _, sources in copies for src in sources}
    assert {*SOURCES, "manifests", "README.md", "pyproject.toml"} <= copied
    assert all(i < project_step for i, sources in copies if set(sources) & {*SOURCES, "pyproject.toml"})
    last_copy, user_step = copies[-1][0], next(i for i, (kw, _) in enumerate(steps) if kw == "USER")
    assert any(kw == "RUN" and "chmod -R a+rX" in rest and rest.split()[-1].startswith("/app")
               for kw, rest in steps[last_copy:user_step]), "the copied code is readable by the non-root user"


def test_dockerignore_keeps_what_the_image_needs_and_drops_secrets_and_state() -> None:
    ignored = {line.strip() for line in DOCKERIGNORE.read_text().splitlines() if line.strip()
               and not line.startswith("#")}
    assert {".git", ".env", ".venv", "*.sqlite3"} <= ignored
    assert not ignored & {*SOURCES, "manifests", "README.md", "pyproject.toml", "rag/demo_kb", RUNTIME_LOCK.name}
    assert list((ROOT / "rag" / "demo_kb").glob("*.md")), "the demo knowledge base ships inside the package"


@pytest.mark.parametrize("path", [DOCKERFILE, COMPOSE, DOCKERIGNORE])
def test_no_credentials_in_the_container_files(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"xox[abpr]-[A-Za-z0-9-]{10,}", text)
    assert not re.search(r"xapp-[A-Za-z0-9-]{10,}", text)
    assert not re.search(r"mongodb(\+srv)?://[^/\s@]*:[^/\s@]*@", text), "no user:password@ in a URI"
    assert not re.search(r"(?i)(password|secret|api_key)\s*[:=]\s*\S", text)


# --- docker-compose.yml ----------------------------------------------------------------------------------------------

def test_compose_wires_the_bot_to_atlas_local(monkeypatch: pytest.MonkeyPatch) -> None:
    compose = yaml.safe_load(COMPOSE.read_text())
    bot, mongo = compose["services"]["navibot"], compose["services"]["mongodb"]
    assert bot["build"] == "." and mongo["image"].startswith("mongodb/mongodb-atlas-local:")
    env = {str(k): str(v) for k, v in bot["environment"].items()}
    assert env["NAVIBOT_STORE"] == "mongodb"
    assert env["NAVIBOT_MONGODB_URI"] == "mongodb://mongodb:27017/?directConnection=true"
    assert describe_hosts(env["NAVIBOT_MONGODB_URI"]).split(":")[0] == mongo["hostname"] == "mongodb"
    known = {f"NAVIBOT_{name.upper()}" for name in Settings.model_fields}
    assert set(env) <= known, f"unknown settings: {set(env) - known}"
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert Settings(_env_file=None).store == "mongodb"  # type: ignore[call-arg]
    assert bot["depends_on"]["mongodb"]["condition"] == "service_healthy"
    assert [e["path"] if isinstance(e, dict) else e for e in bot["env_file"]] == [".env"], "secrets come from .env"
    exposed = the("EXPOSE")[0]
    assert f"{exposed}:{exposed}" in [str(p) for p in bot["ports"]]
    mounts = [v.split(":") for v in bot["volumes"] + mongo["volumes"]]
    assert ["navibot-data", "/data"] in mounts, "the image's VOLUME is a named volume"
    assert {m[0] for m in mounts} <= set(compose["volumes"]), "every named volume is declared"
    assert "/data/db" in {m[1] for m in mounts} and "/data/mongot" in {m[1] for m in mounts}
    grace = Settings(_env_file=None).shutdown_grace_seconds  # type: ignore[call-arg]
    assert float(bot["stop_grace_period"].removesuffix("s")) > grace, "docker waits longer than the bot drains"


# --- the image's command, run here -----------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def signed_mention(channel: str, secret: str) -> tuple[bytes, dict[str, str], str]:
    ts = f"{int(time.time())}.000100"
    body = json.dumps({"token": "legacy", "team_id": TEAM_ID, "api_app_id": "A0NAVI", "type": "event_callback",
                       "event_id": "EvDOCKER1", "event_time": int(time.time()),
                       "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}],
                       "event": {"type": "app_mention", "user": "U0ALICE", "channel": channel, "ts": ts,
                                 "event_ts": ts, "text": f"<@{BOT_USER_ID}> Can college students get SNAP?"}})
    now = str(int(time.time()))
    digest = hmac.new(secret.encode(), f"v0:{now}:{body}".encode(), hashlib.sha256).hexdigest()
    return body.encode(), {"X-Slack-Request-Timestamp": now, "X-Slack-Signature": f"v0={digest}",
                           "Content-Type": "application/json"}, ts


def test_the_image_command_serves_passes_its_healthcheck_and_finishes_an_answer_on_sigterm(
        tmp_path: Path, demo_store_file: Path) -> None:
    """The image's CMD with the image's ENV; Gemini (a fake, 1.5 s per answer) is still writing an answer when
    SIGTERM arrives: the answer is posted and saved, and the process exits 0."""
    loop = BackgroundLoop()
    fake = FakeSlack()
    loop.run(fake.start())
    gemini = FakeGemini().start()
    gemini.delays[":generateContent"] = 1.5
    port = free_port()
    data = tmp_path / "data"  # the volume, with the demo knowledge base ingested
    data.mkdir()
    shutil.copy(demo_store_file, data / "knowledge.sqlite3")
    bin_dir = str(Path(sys.executable).parent)  # the image has python and navibot on its PATH; here, this venv
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8"}
    env.update(env_of_image())
    env["NAVIBOT_DATA_DIR"] = str(data)
    env["NAVIBOT_PORT"] = str(port)
    secret = "0123456789abcdef"
    env.update(SLACK_BOT_TOKEN="xoxb-test", SLACK_SIGNING_SECRET=secret, SLACK_API_URL=fake.api_url,
               NAVIBOT_LLM="gemini", NAVIBOT_GEMINI_API_KEYS="test-key", NAVIBOT_GEMINI_BASE_URLS=gemini.url)
    check = healthcheck_command()

    def healthy() -> bool:
        done = subprocess.run(check, env=env, cwd=tmp_path, capture_output=True, timeout=10, check=False)
        return done.returncode == 0

    assert not healthy(), "the health check fails while nothing listens"
    command = json.loads(the("CMD")[0])
    process = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        deadline = time.monotonic() + 30
        while not healthy():
            assert process.poll() is None, f"navibot serve exited: {process.communicate()[1]}"
            assert time.monotonic() < deadline, "not healthy within 30 s"
            time.sleep(0.2)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
            health = json.loads(response.read())
        assert health["status"] == "ok" and health["knowledge"]["documents"] >= 12
        body, headers, thread = signed_mention("C0DOCKER", secret)
        request = urllib.request.Request(f"http://127.0.0.1:{port}/slack/events", data=body, headers=headers)
        with urllib.request.urlopen(request, timeout=5) as response:
            assert response.status == 200
        while not any(c.path.endswith(":generateContent") for c in gemini.calls):
            assert time.monotonic() < deadline + 10, "the answer was never asked of Gemini"
            time.sleep(0.02)
        process.send_signal(signal.SIGTERM)  # mid-answer
        _out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        loop.run(fake.stop())
        loop.close()
        gemini.stop()
    assert process.returncode == 0, err
    records = [json.loads(line) for line in err.splitlines()]  # serve logs JSON: every stderr line is an object
    [started] = [r for r in records if r.get("event") == "listening"]
    assert started["level"] == "INFO" and started["url"] == f"http://localhost:{port}"
    assert started["message"].startswith(f"navibot serve: http://localhost:{port} as navibot in Navigators: "
                                         "Slack HTTP events at /slack/events")
    assert any(r["message"].startswith("navibot serve: stopping; up to 30 s for 1 answer(s)") for r in records)
    assert "Traceback" not in err and "xoxb-test" not in err and "test-key" not in err
    [posted] = fake.of("chat.postMessage", "C0DOCKER")
    assert posted.args["thread_ts"] == thread and "student" in posted.args["text"].lower()
    saved = SQLiteConversationStore(Settings(_env_file=None, data_dir=data).conversations_path)  # type: ignore[call-arg]
    try:
        [turn] = saved.history(f"slack|{TEAM_ID}|C0DOCKER|{thread}", 5)
    finally:
        saved.close()
    assert "student" in turn.answer.lower()
