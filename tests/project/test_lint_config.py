"""The lint and type settings in pyproject.toml do what .ci/run relies on them for: mypy is strict and ruff keeps the
house's line length and catches dead imports, while the rules configured away stay away."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"


def _run(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", tool, *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, check=False)


def test_mypy_is_strict_with_the_project_settings(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("def untyped(x):\n    return x\n\n\ndef typed(x: int) -> int:\n    return x\n", encoding="utf-8")
    result = _run("mypy", "--config-file", str(PYPROJECT), "--no-incremental", str(sample))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "sample.py:1: error" in result.stdout and "[no-untyped-def]" in result.stdout
    assert "sample.py:5" not in result.stdout  # the typed function passes


def test_ruff_keeps_120_columns_and_the_configured_rules(tmp_path: Path) -> None:
    fits, too_long = "x = '" + "a" * 114 + "'\n", "y = '" + "a" * 115 + "'\n"
    assert (len(fits.rstrip("\n")), len(too_long.rstrip("\n"))) == (120, 121)
    sample = tmp_path / "sample.py"
    sample.write_text("import os\n\n" + fits + too_long + "WORDS = 'a b c'.split()\n", encoding="utf-8")
    result = _run("ruff", "check", "--config", str(PYPROJECT), "--no-cache", "--output-format", "concise", str(sample))
    assert result.returncode == 1, result.stdout + result.stderr
    found = {line.split(": ", 1)[1].split()[0] for line in result.stdout.splitlines() if "sample.py:" in line}
    lines = {int(line.split(":")[1]) for line in result.stdout.splitlines() if "sample.py:" in line}
    assert found == {"F401", "E501"}  # the unused import and the 121-column line; SIM905 is configured away
    assert lines == {1, 4}
