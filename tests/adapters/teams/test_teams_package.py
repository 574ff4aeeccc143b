"""`navibot teams package`: the zip an admin uploads (manifest filled from settings, validated, icons at the root),
and clear one-line refusals for what Teams would reject."""

from __future__ import annotations

import json
import random
import shutil
import struct
import zipfile
import zlib
from pathlib import Path

import pytest

from adapters.teams.package import default_manifest_dir, png_rgba, png_size, validate
from bot.cli.main import main

BOT = "11111111-2222-3333-4444-555555555555"
APP = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"


@pytest.fixture
def teams_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAVIBOT_TEAMS_CLIENT_ID", BOT)
    monkeypatch.setenv("NAVIBOT_TEAMS_APP_ID", APP)


def write_png(path: Path, width: int, height: int, pixel: bytes = b"\xff\xff\xff\x00") -> Path:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + pixel * width for _ in range(height))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    return path


def test_the_shipped_icons_have_the_sizes_teams_requires() -> None:
    folder = default_manifest_dir()
    assert png_size(folder / "color.png") == (192, 192)
    assert png_size(folder / "outline.png") == (32, 32)
    outline = png_rgba(folder / "outline.png")
    assert outline is not None and outline[0][3] == 0, "transparent background"
    assert {p[:3] for p in outline if p[3]} == {(255, 255, 255)}, "white drawing"
    assert sum(1 for p in outline if p[3] > 128) > 50, "and something is drawn"
    template = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert template["id"] == "{{TEAMS_APP_ID}}" and template["bots"][0]["botId"] == "{{BOT_ID}}"
    assert tuple(map(int, template["manifestVersion"].split("."))) >= (1, 19)


def test_package_writes_a_zip_whose_manifest_passes_validation(teams_env: None, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "navibot-teams.zip"
    assert main(["teams", "package", "--out", str(out)]) == 0
    assert "navibot-teams.zip" in capsys.readouterr().out
    with zipfile.ZipFile(out) as archive:
        assert sorted(archive.namelist()) == ["color.png", "manifest.json", "outline.png"]
        manifest = json.loads(archive.read("manifest.json"))
        unpacked = tmp_path / "unpacked"
        archive.extractall(unpacked)
    assert validate(manifest, unpacked) == []
    assert manifest["id"] == APP and manifest["bots"][0]["botId"] == BOT and manifest["version"] == "1.0.0"
    assert manifest["$schema"].endswith(f"/v{manifest['manifestVersion']}/MicrosoftTeams.schema.json")
    bot = manifest["bots"][0]
    assert {s.lower() for s in bot["scopes"]} == {"team", "groupchat", "personal"}
    listed = {c["title"] for cl in bot["commandLists"] for c in cl["commands"]}
    assert {"reset", "mood", "help"} <= listed
    assert {s.lower() for cl in bot["commandLists"] for s in cl["scopes"]} == {"team", "groupchat", "personal"}
    assert "{{" not in json.dumps(manifest)


def test_the_app_id_defaults_to_the_bot_id(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NAVIBOT_TEAMS_CLIENT_ID", BOT)
    assert main(["teams", "package", "--out", str(tmp_path / "p.zip")]) == 0
    with zipfile.ZipFile(tmp_path / "p.zip") as archive:
        assert json.loads(archive.read("manifest.json"))["id"] == BOT


def test_missing_bot_id_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["teams", "package", "--out", str(tmp_path / "p.zip")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "NAVIBOT_TEAMS_CLIENT_ID is not set" in err
    assert not (tmp_path / "p.zip").exists()


@pytest.mark.parametrize(("env", "expected"), [
    ({"NAVIBOT_TEAMS_APP_VERSION": "1.0"}, "version '1.0' is not semver"),
    ({"NAVIBOT_TEAMS_APP_NAME": "Navibot for the Department of Human Services"},
     "name.short is 44 characters long; at most 30"),
    ({"NAVIBOT_TEAMS_PRIVACY_URL": "http://example.org/privacy"}, "developer.privacyUrl must be an https:// URL"),
    ({"NAVIBOT_TEAMS_VALID_DOMAINS": "https://example.org"}, "validDomains must be a list of host names"),
    ({"NAVIBOT_TEAMS_APP_ID": "not-a-guid"}, "NAVIBOT_TEAMS_APP_ID must be a GUID"),
])
def test_a_broken_setting_is_refused_with_a_clear_message(teams_env: None, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], env: dict[str, str],
                                                          expected: str) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["teams", "package", "--out", str(tmp_path / "p.zip")]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err
    assert not (tmp_path / "p.zip").exists()


def test_wrong_icon_sizes_and_a_broken_manifest_are_rejected(teams_env: None, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "mine"
    shutil.copytree(default_manifest_dir(), folder)
    write_png(folder / "color.png", 200, 192)
    (folder / "outline.png").write_text("not a png", encoding="utf-8")
    assert main(["teams", "package", "--manifest-dir", str(folder), "--out", str(tmp_path / "p.zip")]) == 2
    err = capsys.readouterr().err
    assert "color.png is 200x192 pixels; it must be 192x192" in err and "outline.png is not a PNG file" in err

    (folder / "manifest.json").write_text('{"id": "{{TEAMS_APP_ID}}", ', encoding="utf-8")
    assert main(["teams", "package", "--manifest-dir", str(folder), "--out", str(tmp_path / "p.zip")]) == 2
    assert "manifest.json is not valid JSON" in capsys.readouterr().err

    (folder / "manifest.json").write_text('{"id": "{{SOMETHING_ELSE}}"}', encoding="utf-8")
    assert main(["teams", "package", "--manifest-dir", str(folder), "--out", str(tmp_path / "p.zip")]) == 2
    assert "placeholders no setting fills: SOMETHING_ELSE" in capsys.readouterr().err


def test_an_outline_icon_that_is_not_white_on_transparent_is_rejected(teams_env: None, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "mine"
    shutil.copytree(default_manifest_dir(), folder)
    write_png(folder / "outline.png", 32, 32, pixel=b"\x0f\x6c\xbd\xff")  # solid blue, no transparency
    assert main(["teams", "package", "--manifest-dir", str(folder), "--out", str(tmp_path / "p.zip")]) == 2
    assert "outline.png has no transparent background" in capsys.readouterr().err
    write_png(folder / "outline.png", 32, 32, pixel=b"\x0f\x6c\xbd\x80")
    assert main(["teams", "package", "--manifest-dir", str(folder), "--out", str(tmp_path / "p.zip")]) == 2
    assert "must be white on transparent" in capsys.readouterr().err


def test_validation_names_every_missing_required_field(tmp_path: Path) -> None:
    problems = validate({"$schema": "https://developer.microsoft.com/json-schemas/teams/v1.16/"
                                    "MicrosoftTeams.schema.json", "manifestVersion": "1.16"}, tmp_path)
    text = "; ".join(problems)
    for field in ("version is missing", "id is missing", "developer.name is missing", "name.short is missing",
                  "description.short is missing", "icons.color is missing", "bots is missing", "accentColor is missing",
                  "manifestVersion '1.16' is too old"):
        assert field in text


def test_a_missing_manifest_folder_says_to_pass_manifest_dir(teams_env: None, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["teams", "package", "--manifest-dir", str(tmp_path / "nowhere")]) == 2
    assert "pass --manifest-dir" in capsys.readouterr().err


def test_running_with_a_partial_set_of_credentials_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NAVIBOT_TEAMS_CLIENT_ID", BOT)
    assert main(["teams", "--port", "1"]) == 2
    err = capsys.readouterr().err
    assert "NAVIBOT_TEAMS_CLIENT_SECRET, NAVIBOT_TEAMS_TENANT_ID" in err and "Traceback" not in err


def test_png_pixels_are_read_through_every_row_filter(tmp_path: Path) -> None:
    """Icon tools pick a row filter per row (Sub, Up, Average, Paeth): the reader undoes each of them."""
    rng = random.Random(7)
    width, height, channels = 5, 5, 4
    rows = [bytes(rng.randrange(256) for _ in range(width * channels)) for _ in range(height)]

    def paeth(a: int, b: int, c: int) -> int:
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        return a if pa <= pb and pa <= pc else b if pb <= pc else c

    raw, previous = b"", bytes(width * channels)
    for y, row in enumerate(rows):
        kind = y % 5
        out = bytearray()
        for x, value in enumerate(row):
            left = row[x - channels] if x >= channels else 0
            up, corner = previous[x], previous[x - channels] if x >= channels else 0
            predictor = [0, left, up, (left + up) // 2, paeth(left, up, corner)][kind]
            out.append((value - predictor) & 0xFF)
        raw += bytes([kind]) + bytes(out)
        previous = row

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    path = tmp_path / "f.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    expected = [tuple(row[i:i + 4]) for row in rows for i in range(0, width * channels, 4)]
    assert png_rgba(path) == expected


def test_an_out_path_that_cannot_be_written_is_one_clear_line(teams_env: None, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["teams", "package", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is a folder; give the zip file's name" in err and "Traceback" not in err
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    assert main(["teams", "package", "--out", str(blocker / "p.zip")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("navibot: cannot write the Teams app package") and err.count("\n") == 1


def test_a_schema_url_with_a_locale_as_teams_toolkit_writes_it_is_accepted(teams_env: None, tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    shutil.copytree(default_manifest_dir(), folder)
    template = folder / "manifest.json"
    text = template.read_text(encoding="utf-8")
    template.write_text(text.replace("developer.microsoft.com/json-schemas",
                                     "developer.microsoft.com/en-us/json-schemas"),
                        encoding="utf-8")
    assert "/en-us/" in template.read_text(encoding="utf-8")
    assert main(["teams", "package", "--manifest-dir", str(folder), "--out", str(tmp_path / "p.zip")]) == 0


@pytest.mark.parametrize(("credentials", "expected"), [(False, "127.0.0.1"), (True, "0.0.0.0")])
def test_anonymous_mode_listens_on_this_machine_only_unless_told_otherwise(
        monkeypatch: pytest.MonkeyPatch, credentials: bool, expected: str) -> None:
    import bot.server.app as server_app

    if credentials:
        monkeypatch.setenv("NAVIBOT_TEAMS_CLIENT_ID", "00000000-0000-0000-0000-000000000001")
        monkeypatch.setenv("NAVIBOT_TEAMS_CLIENT_SECRET", "s3cret")
        monkeypatch.setenv("NAVIBOT_TEAMS_TENANT_ID", "00000000-0000-0000-0000-000000000002")
    hosts: list[str] = []

    async def listen(app: object, host: str, port: int) -> None:  # the server's run, without waiting for SIGTERM
        hosts.append(host)

    monkeypatch.setattr(server_app, "run", listen)
    assert main(["teams", "--port", "3999"]) == 0
    assert main(["teams", "--port", "3999", "--host", "0.0.0.0"]) == 0
    assert hosts == [expected, "0.0.0.0"]
