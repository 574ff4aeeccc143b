"""`navibot reindex`: switch embedders without re-reading the sources. Every stored chunk is embedded again with
the configured embedder (NAVIBOT_EMBEDDER and its model settings) into a new store: a SQLite file or another
MongoDB database. The work is in rag/ingest/reindex.py; a killed run resumes where it stopped."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tqdm import tqdm

from bot.config.settings import Settings
from bot.errors import UserError
from bot.wiring.choose_models import make_embedder
from bot.wiring.open_stores import open_knowledge_store, store_description
from rag.ingest.reindex import reindex
from rag.search.embedding import EmbeddingUnavailable
from rag.search.store import EmbeddingMismatch, KnowledgeStore


def add_reindex_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "reindex", help="re-embed every stored chunk with the configured embedder into a new store",
        description="Re-embeds every stored chunk with the embedder configured now (NAVIBOT_EMBEDDER and its model "
                    "settings) into a new store, without the original files or sites. Killed midway, the same "
                    "command resumes where it stopped. Then point NAVIBOT_STORE_FILE (or NAVIBOT_MONGODB_DATABASE) "
                    "at the new store.")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--from", dest="source", type=Path, metavar="FILE",
                        help="SQLite store to read (default: the configured store)")
    source.add_argument("--from-database", metavar="NAME", help="MongoDB database to read (NAVIBOT_MONGODB_URI)")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--to", dest="target", type=Path, metavar="FILE", help="new SQLite store to write")
    target.add_argument("--to-database", metavar="NAME", help="new MongoDB database to write (NAVIBOT_MONGODB_URI)")
    parser.set_defaults(func=cmd_reindex)


def _mongo(settings: Settings, database: str) -> Settings:
    return settings.model_copy(update={"store": "mongodb", "mongodb_database": database})


def _where(settings: Settings, path: Path | None, database: str | None) -> tuple[Settings, Path | None, str]:
    """The settings and path that open one side, and a name to compare the two sides by."""
    if database:
        mongo = _mongo(settings, database)
        return mongo, None, f"mongodb:{database}"
    if path is not None:
        return settings.model_copy(update={"store": "sqlite"}), path, f"file:{path.resolve()}"
    if settings.store == "mongodb":
        return settings, None, f"mongodb:{settings.mongodb_database}"
    return settings, None, f"file:{settings.store_path.resolve()}"


def cmd_reindex(args: argparse.Namespace, settings: Settings) -> int:
    source_settings, source_path, source_name = _where(settings, args.source, args.from_database)
    target_settings, target_path, target_name = _where(settings, args.target, args.to_database)
    if source_name == target_name:
        raise UserError("the target must be another store than the source: reindex writes a new store (--to FILE "
                        "or --to-database NAME), then point the bot at it")
    if source_path is not None and not source_path.exists():
        raise UserError(f"no knowledge store at {source_path}")
    embedder = make_embedder(settings)
    source = open_knowledge_store(source_settings, source_path)
    target: KnowledgeStore | None = None
    try:
        target = open_knowledge_store(target_settings, target_path)
        total = source.counts().get("documents", 0)
        bar = tqdm(total=total, desc="reindex", unit="doc", file=sys.stderr, disable=not sys.stderr.isatty())
        try:
            summary = reindex(source, target, embedder, lambda done, _: bar.update(done - bar.n))
        finally:
            bar.close()
    except EmbeddingMismatch as exc:
        raise UserError(f"{exc}; choose a new --to store for this model") from exc
    except EmbeddingUnavailable as exc:
        raise UserError(f"{exc}; stopped: run the same command again when the model is reachable (documents "
                        "already re-embedded are skipped)") from exc
    finally:
        source.close()
        if target is not None:
            target.close()
    for problem in summary.problems:
        print(f"skipped {problem}", file=sys.stderr)
    written = store_description(target_settings, target_path)
    print(f"reindex: {summary.line()} -> {written} ({embedder.name})")
    if target_path is not None:
        print(f"next: set NAVIBOT_STORE_FILE={target_path} (and keep NAVIBOT_EMBEDDER as it is now)")
    else:
        print(f"next: NAVIBOT_MONGODB_DATABASE={args.to_database} navibot db init, then set that variable for the bot")
    return 0 if not summary.problems else 1
