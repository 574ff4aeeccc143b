"""The `navibot` command as a person uses it: summaries, exit codes and plain error messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli.main import main
from tests.conftest import write


def test_ingest_then_search(kb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", str(kb), "--tags", "demo"]) == 0
    out = capsys.readouterr().out
    assert "ingest: 4 added, 0 updated, 0 unchanged, 0 removed, 0 failed;" in out
    assert main(["search", "can", "college", "students", "get", "SNAP?", "--k", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1. SNAP for college students")
    assert "https://www.fns.usda.gov/snap/students" in out
    assert "\n2. " in out and "\n3. " not in out


def test_search_json(kb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["ingest", str(kb)])
    capsys.readouterr()
    assert main(["search", "heating bill help", "--json", "--k", "1", "--tags", "liheap"]) == 0
    [hit] = json.loads(capsys.readouterr().out)
    assert hit["doc_id"] == "kb/liheap"
    assert set(hit) >= {"chunk_id", "title", "heading_path", "url", "score", "snippet", "subchunks"}


def test_ingest_exit_codes(tmp_path: Path, kb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = write(tmp_path / "empty.md", "")
    assert main(["ingest", str(empty)]) == 1  # nothing could be ingested
    err = capsys.readouterr().err
    assert "empty.md: empty file" in err
    assert main(["ingest", str(kb), str(empty)]) == 0  # some documents made it: success, problem reported
    assert "empty.md: empty file" in capsys.readouterr().err
    assert main(["ingest"]) == 2
    assert "give at least one file or folder" in capsys.readouterr().err


def test_demo_knowledge_base(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "--demo"]) == 0
    out = capsys.readouterr().out
    added = int(out.split("ingest: ")[1].split(" added")[0])
    assert 12 <= added <= 20
    assert main(["search", "Can college students get SNAP?", "--k", "1"]) == 0
    assert "SNAP for college students" in capsys.readouterr().out


def test_friendly_errors(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["search", "   "]) == 2
    assert "the question is empty" in capsys.readouterr().err
    assert main(["search", "anything"]) == 2
    assert "is empty: run `navibot ingest PATH`" in capsys.readouterr().err
    monkeypatch.setenv("NAVIBOT_TOP_K", "lots")
    assert main(["search", "anything"]) == 2
    assert "invalid setting: NAVIBOT_TOP_K" in capsys.readouterr().err
    monkeypatch.delenv("NAVIBOT_TOP_K")
    blocker = Path("a-file")
    blocker.write_text("not a folder", encoding="utf-8")
    assert main(["ask", "--store", str(blocker / "store.sqlite3"), "anything"]) == 2  # a data dir that can't exist
    assert capsys.readouterr().err.startswith("navibot: cannot create the folder of the knowledge store")


def test_console_script_runs_without_traceback(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "bot.cli.main", "search", "x", "--store", str(tmp_path / "s.db")],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "is empty" in result.stderr


def test_top_k_setting_is_the_default(kb: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    main(["ingest", str(kb)])
    capsys.readouterr()
    monkeypatch.setenv("NAVIBOT_TOP_K", "2")
    assert main(["search", "benefits", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2
    assert main(["search", "benefits", "--k", "0"]) == 2
    assert "--k must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["stats"], ["search", "SNAP", "--k", "3"]])
def test_output_into_a_pipe_closed_early_is_not_a_traceback(command: list[str], kb: Path, tmp_path: Path) -> None:
    """`navibot stats | head -1`, `navibot search ... | head`: the reader stopped early, which is not an error (it was
    a BrokenPipeError traceback and exit 1)."""
    import os

    assert main(["ingest", str(kb)]) == 0
    process = subprocess.Popen([sys.executable, "-m", "bot.cli.main", *command], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env={**os.environ}, cwd=tmp_path)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # before it writes anything: every write meets a closed pipe
    err = process.stderr.read().decode()
    assert process.wait(30) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err
