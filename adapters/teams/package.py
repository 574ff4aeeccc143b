"""The Teams app package an admin uploads: manifests/teams/manifest.json with its placeholders filled from the
settings, checked, and zipped with the two icons at the zip's root.

The checks are the ones Teams rejects an upload for (required fields, GUID ids, semver version, name and
description lengths, icon files with their exact sizes), so a mistake is caught here with a clear message rather
than as an upload error in Teams admin center or the Developer Portal.
"""

from __future__ import annotations

import json
import re
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

from adapters.teams.settings import ENV_PREFIX, GUID, TeamsSettings
from bot.errors import UserError

MIN_MANIFEST_VERSION = (1, 19)
ICONS = {"color": (192, 192), "outline": (32, 32)}
SCOPES = {"team", "groupchat", "personal"}
_PLACEHOLDER = re.compile(r"\{\{([A-Z_]+)\}\}")
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
# Teams Toolkit writes the schema URL with a locale (…microsoft.com/en-us/json-schemas/…); both forms are valid.
_SCHEMA = re.compile(r"^https://developer\.microsoft\.com/(?:[a-z]{2}-[a-z]{2}/)?json-schemas/teams/v(\d+)\.(\d+)/"
                     r"MicrosoftTeams\.schema\.json$", re.IGNORECASE)
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def default_manifest_dir() -> Path:
    """manifests/teams of the source checkout this module runs from (an editable install, or the repository).

    The manifests folder is not Python package data, so an install from a wheel has no copy of it: there this path
    does not exist and `navibot teams package` asks for `--manifest-dir` (point it at a checkout's
    manifests/teams, or at your own copy with your branding)."""
    return Path(__file__).resolve().parents[2] / "manifests" / "teams"


def placeholder_values(settings: TeamsSettings) -> dict[str, str]:
    bot_id = settings.client_id.strip()
    if not bot_id:
        raise UserError(f"{ENV_PREFIX}CLIENT_ID is not set: the package needs the bot's Microsoft App ID "
                        "(the Azure Bot's app registration client id)")
    return {"TEAMS_APP_ID": (settings.app_id or bot_id).strip(), "BOT_ID": bot_id,
            "APP_VERSION": settings.app_version.strip(), "APP_NAME": settings.app_name.strip(),
            "DEVELOPER_NAME": settings.developer_name.strip(), "WEBSITE_URL": settings.website_url.strip(),
            "PRIVACY_URL": settings.privacy_url.strip(), "TERMS_URL": settings.terms_url.strip()}


def fill(template: str, values: dict[str, str]) -> dict[str, Any]:
    """The manifest with each {{NAME}} replaced (JSON-escaped, so a quote in a name cannot break the file)."""
    unknown = sorted({m.group(1) for m in _PLACEHOLDER.finditer(template)} - set(values))
    if unknown:
        raise UserError(f"manifest.json has placeholders no setting fills: {', '.join(unknown)}")
    text = _PLACEHOLDER.sub(lambda m: json.dumps(values[m.group(1)])[1:-1], template)
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"manifest.json is not valid JSON (line {exc.lineno}): {exc.msg}") from exc
    if not isinstance(manifest, dict):
        raise UserError("manifest.json must be a JSON object")
    return manifest


def png_size(path: Path) -> tuple[int, int] | None:
    """Width and height from a PNG's IHDR header; None if the file is not a PNG."""
    with path.open("rb") as handle:
        head = handle.read(24)
    if len(head) < 24 or not head.startswith(_PNG_SIGNATURE) or head[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", head[16:24])
    return int(width), int(height)


def png_rgba(path: Path) -> list[tuple[int, int, int, int]] | None:
    """The pixels of an 8-bit, non-interlaced RGBA or grey+alpha PNG (what icon tools write for a transparent
    icon); None for any other kind, which is then only checked for its size."""
    data = path.read_bytes()
    if not data.startswith(_PNG_SIGNATURE):
        return None
    pos, header, idat = 8, b"", bytearray()
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    if len(header) < 13:
        return None
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header[:13])
    channels = {6: 4, 4: 2}.get(colour)
    if depth != 8 or channels is None or interlace:
        return None
    try:
        raw = zlib.decompress(bytes(idat))
    except zlib.error:
        return None
    stride = width * channels
    if len(raw) < height * (stride + 1):
        return None
    rows: list[bytearray] = []
    previous = bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):  # undo the PNG row filter (None, Sub, Up, Average, Paeth)
            left = line[x - channels] if x >= channels else 0
            up, corner = previous[x], previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[x] = (line[x] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append(line)
        previous = line
    if channels == 4:
        return [(r[i], r[i + 1], r[i + 2], r[i + 3]) for r in rows for i in range(0, stride, 4)]
    return [(r[i], r[i], r[i], r[i + 1]) for r in rows for i in range(0, stride, 2)]


def _outline_problem(path: Path) -> str | None:
    """Teams wants the outline icon white on a transparent background."""
    pixels = png_rgba(path)
    if pixels is None:
        return None
    if all(a == 255 for *_rgb, a in pixels):
        return f"icons.outline: {path.name} has no transparent background"
    if any(a > 0 and min(r, g, b) < 235 for r, g, b, a in pixels):
        return f"icons.outline: {path.name} must be white on transparent (it has coloured pixels)"
    return None


def _text(manifest: dict[str, Any], path: str) -> str | None:
    value: Any = manifest
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, str) else None


def validate(manifest: dict[str, Any], folder: Path) -> list[str]:
    """Every problem found (empty list: the package can be uploaded). `folder` holds the icon files."""
    problems: list[str] = []

    def need(path: str, limit: int | None = None, https: bool = False) -> str | None:
        value = _text(manifest, path)
        if not value or not value.strip():
            problems.append(f"{path} is missing")
            return None
        if limit is not None and len(value) > limit:
            problems.append(f"{path} is {len(value)} characters long; at most {limit}")
        if https and not value.startswith("https://"):
            problems.append(f"{path} must be an https:// URL: {value!r}")
        return value

    leftovers = sorted(set(_PLACEHOLDER.findall(json.dumps(manifest))))
    if leftovers:
        problems.append(f"placeholders left unfilled: {', '.join(leftovers)}")
    schema = _SCHEMA.match(_text(manifest, "$schema") or "")
    version = _text(manifest, "manifestVersion") or ""
    if not schema:
        problems.append("$schema must be https://developer.microsoft.com/json-schemas/teams/vX.Y/"
                        "MicrosoftTeams.schema.json")
    elif f"{schema.group(1)}.{schema.group(2)}" != version:
        problems.append(f"manifestVersion {version!r} does not match the $schema version "
                        f"{schema.group(1)}.{schema.group(2)}")
    if not re.fullmatch(r"\d+\.\d+", version) or tuple(map(int, version.split("."))) < MIN_MANIFEST_VERSION:
        problems.append(f"manifestVersion {version!r} is too old or malformed; use "
                        f"{'.'.join(map(str, MIN_MANIFEST_VERSION))} or newer")
    app_version = need("version")
    if app_version and not _SEMVER.match(app_version):
        problems.append(f"version {app_version!r} is not semver (MAJOR.MINOR.PATCH, e.g. 1.0.0)")
    app_id = need("id")
    if app_id and not GUID.match(app_id):
        problems.append(f"id {app_id!r} is not a GUID ({ENV_PREFIX}APP_ID)")
    need("developer.name", 32)
    for url in ("websiteUrl", "privacyUrl", "termsOfUseUrl"):
        need(f"developer.{url}", 2048, https=True)
    need("name.short", 30)
    if _text(manifest, "name.full") is not None:
        need("name.full", 100)
    need("description.short", 80)
    need("description.full", 4000)
    accent = need("accentColor")  # required by the schema
    if accent and not re.fullmatch(r"#[0-9a-fA-F]{6}", accent):
        problems.append(f"accentColor {accent!r} is not an HTML colour like #0F6CBD")
    for icon, size in ICONS.items():
        name = need(f"icons.{icon}")
        if not name:
            continue
        path = folder / name
        if not path.is_file():
            problems.append(f"icons.{icon}: {path} does not exist")
            continue
        found = png_size(path)
        if found is None:
            problems.append(f"icons.{icon}: {path} is not a PNG file")
        elif found != size:
            problems.append(f"icons.{icon}: {path.name} is {found[0]}x{found[1]} pixels; "
                            f"it must be {size[0]}x{size[1]}")
        elif icon == "outline" and (problem := _outline_problem(path)):
            problems.append(problem)
    problems.extend(_bot_problems(manifest))
    domains = manifest.get("validDomains", [])
    if not isinstance(domains, list) or not all(isinstance(d, str) and d and "://" not in d for d in domains):
        problems.append("validDomains must be a list of host names without https:// (e.g. example.org)")
    return problems


def _bot_problems(manifest: dict[str, Any]) -> list[str]:
    bots = manifest.get("bots")
    if not isinstance(bots, list) or not bots:
        return ["bots is missing: the package must declare the bot"]
    problems = []
    for n, bot in enumerate(bots):
        where = f"bots[{n}]"
        if not isinstance(bot, dict):
            problems.append(f"{where} must be an object")
            continue
        if not GUID.match(str(bot.get("botId", ""))):
            problems.append(f"{where}.botId {bot.get('botId')!r} is not a GUID ({ENV_PREFIX}CLIENT_ID)")
        scopes = bot.get("scopes")
        if not isinstance(scopes, list) or not scopes or not {str(s).lower() for s in scopes} <= SCOPES:
            problems.append(f"{where}.scopes must be some of team, groupChat, personal")
        for k, command_list in enumerate(bot.get("commandLists") or []):
            commands = command_list.get("commands") if isinstance(command_list, dict) else None
            if not isinstance(commands, list) or not 1 <= len(commands) <= 10:
                problems.append(f"{where}.commandLists[{k}] must have 1 to 10 commands")
                continue
            for command in commands:
                title, description = str(command.get("title", "")), str(command.get("description", ""))
                if not title or len(title) > 32:
                    problems.append(f"{where}.commandLists[{k}]: command title {title!r} must be 1 to 32 characters")
                if not description or len(description) > 128:
                    problems.append(f"{where}.commandLists[{k}]: the description of {title!r} must be 1 to 128 "
                                    "characters")
    return problems


def build_package(settings: TeamsSettings, out: Path, manifest_dir: Path | None = None) -> dict[str, Any]:
    """Writes the zip (manifest.json, color.png, outline.png at its root) and returns the filled manifest."""
    folder = manifest_dir or default_manifest_dir()
    template = folder / "manifest.json"
    if not template.is_file():
        raise UserError(f"no Teams manifest at {template}; pass --manifest-dir with the folder that holds "
                        "manifest.json, color.png and outline.png (manifests/teams in the Navibot repository)")
    manifest = fill(template.read_text(encoding="utf-8"), placeholder_values(settings))
    extra = [d.strip() for d in settings.valid_domains.split(",") if d.strip()]
    manifest["validDomains"] = list(dict.fromkeys([*manifest.get("validDomains", []), *extra]))
    problems = validate(manifest, folder)
    if problems:
        raise UserError("the Teams app package is not valid: " + "; ".join(problems))
    if out.is_dir():
        raise UserError(f"--out {out} is a folder; give the zip file's name, e.g. {out / 'navibot-teams.zip'}")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("manifest.json", json.dumps(manifest, ensure_ascii=False, indent=2) + "\n")
            for icon in ICONS:
                archive.write(folder / manifest["icons"][icon], arcname=manifest["icons"][icon])
    except OSError as exc:  # a read-only folder, a full disk: no half-written zip is left to upload
        if out.is_file():
            out.unlink()
        raise UserError(f"cannot write the Teams app package {out}: {exc.strerror or exc}") from exc
    return manifest
