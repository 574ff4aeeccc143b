"""The docs site (mkdocs.yml, docs/) builds with MkDocs' strict mode: a broken link, anchor or nav entry fails it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("mkdocs", reason="mkdocs is not installed (it comes with the dev extras: pip install -e '.[dev]')")


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    # Never --quiet: it drops the warnings before strict mode counts them, and a broken link then passes (mkdocs 1.6).
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(config), "--site-dir", str(site)],
                          capture_output=True, text=True, timeout=120, cwd=config.parent, check=False)


def test_the_docs_site_builds_strictly_and_needs_no_network(tmp_path: Path) -> None:
    result = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, f"`mkdocs build --strict` failed:\n{result.stdout}{result.stderr}"
    pages = list((tmp_path / "site").rglob("*.html"))
    assert (tmp_path / "site" / "settings" / "index.html").exists()
    assert len(pages) >= len(list((ROOT / "docs").glob("*.md")))
    # the theme's highlight.js and web fonts would come from a CDN: the built site must not ask for any
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "cdnjs" not in text and "fonts.googleapis" not in text, page


@pytest.mark.parametrize(("link", "complaint"), [
    ("[a page that does not exist](nowhere.md)", "nowhere.md"),
    ("[a heading that does not exist](slack.md#no-such-heading)", "no-such-heading"),
])
def test_a_broken_link_fails_the_build(tmp_path: Path, link: str, complaint: str) -> None:
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    index = tmp_path / "docs" / "index.md"
    index.write_text(index.read_text(encoding="utf-8") + f"\nSee {link}.\n", encoding="utf-8")
    result = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0
    assert complaint in result.stdout + result.stderr


def test_no_page_nests_a_fenced_code_block_in_a_list() -> None:
    """Python-Markdown (MkDocs) reads ``` fences only at the top level: one indented under a list item renders as
    inline text and ends the list, without any warning. Code inside a list item is indented 8 spaces instead."""
    nested = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        in_fence = False
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith(("```", "~~~")):
                in_fence = not in_fence
            elif not in_fence and line.lstrip().startswith(("```", "~~~")):
                nested.append(f"{page.relative_to(ROOT)}:{number}")
    assert not nested, f"fenced code indented in a list (write it as an indented code block): {', '.join(nested)}"
