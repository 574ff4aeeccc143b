"""Moods: the tone of an answer, from a data file an admin can edit or extend (rag/data/moods.toml)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any


class MoodFileError(RuntimeError):
    """The admin's moods file cannot be read or is malformed; the message names the file and the problem."""


@dataclass(frozen=True, slots=True)
class Mood:
    name: str
    description: str
    instructions: str  # for a language-model answerer, placed just before the question
    max_words: int = 60  # length of the offline extractive answer
    prefix: str = ""  # put before the offline answer
    offline_note: str = ""  # said with the offline answer when it cannot honour the tone


def _parse(data: dict[str, Any], where: str) -> tuple[dict[str, Mood], str | None]:
    moods: dict[str, Mood] = {}
    table = data.get("moods", {})
    if not isinstance(table, dict):
        raise MoodFileError(f"{where}: [moods] must be a table of moods")
    for name, spec in table.items():
        key = str(name).strip().lower()
        if not key.isidentifier() or not isinstance(spec, dict):
            raise MoodFileError(f"{where}: mood {name!r} needs a one-word name and a table of fields")
        missing = [f for f in ("description", "instructions") if not str(spec.get(f, "")).strip()]
        if missing:
            raise MoodFileError(f"{where}: mood {key!r} is missing {', '.join(missing)}")
        try:
            max_words = int(spec.get("max_words", 60))
        except (TypeError, ValueError) as exc:
            raise MoodFileError(f"{where}: mood {key!r}: max_words must be a whole number") from exc
        if not 10 <= max_words <= 400:
            raise MoodFileError(f"{where}: mood {key!r}: max_words must be between 10 and 400")
        moods[key] = Mood(key, str(spec["description"]).strip(), str(spec["instructions"]).strip(), max_words,
                          str(spec.get("prefix", "")).strip(), str(spec.get("offline_note", "")).strip())
    default = data.get("default")
    return moods, (str(default).strip().lower() if default else None)


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise MoodFileError(f"{path}: cannot read the moods file ({exc.strerror or exc})") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise MoodFileError(f"{path}: not valid TOML ({exc})") from exc


class MoodBook:
    """The bundled moods, with an admin's file layered on top (same name replaces, new names add)."""

    def __init__(self, extra_file: Path | None = None) -> None:
        bundled = Path(str(resources.files("rag") / "data" / "moods.toml"))
        self.moods, default = _parse(_read(bundled), str(bundled))
        named_by = bundled  # the file whose `default` is in force, named in the error
        if extra_file is not None:
            extra, extra_default = _parse(_read(extra_file), str(extra_file))
            self.moods.update(extra)
            if extra_default:
                default, named_by = extra_default, extra_file
        if not default or default not in self.moods:
            raise MoodFileError(f"{named_by}: default mood {default!r} is not defined")
        self.default = default

    @property
    def names(self) -> list[str]:
        return list(self.moods)

    def get(self, name: str | None) -> Mood | None:
        """The mood of that name (case-insensitive), or None if there is none."""
        return self.moods.get((name or "").strip().lower())

    def resolve(self, name: str | None) -> Mood:
        """The named mood, falling back to the default (a preference saved before a mood was removed)."""
        return self.get(name) or self.moods[self.default]

    def listing(self, current: str | None = None) -> str:
        current_mood = self.resolve(current)
        lines = [f"{'▸' if m.name == current_mood.name else '•'} {m.name} — {m.description}"
                 for m in self.moods.values()]
        return f"Current mood: {current_mood.name}\n" + "\n".join(lines) + "\nChange it with `mood <name>`."
