"""The `navibot` command: ingest documents, search them, ask questions, chat, evaluate."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from bot.chat.access import AccessError, check_groups
from bot.cli.admin_cli import add_admin_parsers
from bot.cli.check_cli import add_check_parser
from bot.cli.crawl_cli import add_crawl_parser
from bot.cli.db_cli import add_db_parser
from bot.cli.reindex_cli import add_reindex_parser
from bot.cli.serve_cli import add_serve_parser, add_slack_parser, add_teams_parser
from bot.cli.terminal import ask, chat
from bot.config.settings import Settings
from bot.errors import UserError
from bot.observability.logs import configure_cli_logging
from bot.wiring.open_stores import store_description
from bot.wiring.runtime import Bot, build_bot, build_core, build_engine
from rag.answer.evidence import evidence
from rag.answer.moods import MoodBook, MoodFileError
from rag.answer.rewrite import exchanges_from_messages, with_standalones
from rag.cite.rail import Citation
from rag.evaluation.evaluate import (
    EvalTurn,
    evaluate,
    evaluate_sections,
    is_section_set,
    ranked_doc_ids,
    read_questions,
    squash,
)
from rag.redaction import redact
from rag.search.paragraphs import rank_paragraphs
from rag.search.store import EmbeddingMismatch

EXIT_USAGE = 2


def demo_kb_path() -> Path:
    """The bundled demo knowledge base (Markdown pages shipped inside the package)."""
    return Path(str(resources.files("rag") / "demo_kb"))


def _csv(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def cmd_ingest(args: argparse.Namespace, settings: Settings) -> int:
    roots = [Path(p) for p in args.paths]
    if args.demo:
        roots.append(demo_kb_path())
    if not roots:
        raise UserError("give at least one file or folder to ingest (or --demo for the bundled demo pages)")
    groups = check_groups(_csv(args.groups), "--groups")  # before the store opens
    core = build_core(settings, args.store)
    try:
        summary = core.ingestor.ingest_paths(roots, tags=_csv(args.tags), groups=groups, prune=args.prune)
    finally:
        core.close()
    for problem in summary.problems:
        print(f"skipped {problem}", file=sys.stderr)
    print(f"ingest: {summary.line()} -> {store_description(settings, args.store)}")
    return 0 if summary.ingested or (args.prune and summary.removed) else 1


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    question = " ".join(args.question).strip()
    if not question:
        raise UserError("the question is empty: navibot search \"can college students get SNAP?\"")
    core = build_core(settings, args.store)
    try:
        if core.store.counts()["chunks"] == 0:
            raise UserError(f"the knowledge store {store_description(settings, args.store)} is empty: "
                            "run `navibot ingest PATH` (or `navibot ingest --demo`) first")
        query = redact(question) if settings.redact_outbound else question  # it may go to a hosted embedder
        hits = core.retriever.search(query, k=args.k or settings.top_k, tags=_csv(args.tags),
                                     groups=_csv(args.groups))
    finally:
        core.close()
    if args.json:
        print(json.dumps([h.as_dict() for h in hits], ensure_ascii=False, indent=2))
        return 0
    if not hits:
        print("No matching passages.")
    for rank, hit in enumerate(hits, start=1):
        # A chunk packed from sibling sections has only their parent as its path: name the sections too.
        depth = len(hit.chunk.heading_path)
        sections = list(dict.fromkeys(s.heading_path[depth] for s in hit.chunk.subchunks
                                      if len(s.heading_path) > depth))
        path = " > ".join([hit.chunk.title, *hit.chunk.heading_path, *([" · ".join(sections)] if sections else [])])
        print(f"{rank}. {path}  (score {hit.score:.4f})")
        where = hit.chunk.url or hit.chunk.doc_id
        print(f"   {where}" + (f"  page {hit.chunk.page}" if hit.chunk.page else ""))
        snippet = hit.as_dict(snippet_chars=300)["snippet"].replace("\n", " ")
        print(textwrap.indent(textwrap.fill(snippet, width=100), "   "))
    return 0


def _open_bot_with_knowledge(args: argparse.Namespace, settings: Settings) -> Bot:
    """The bot on the configured store; an empty store first gets the bundled demo knowledge base."""
    bot = build_bot(settings, args.store)
    try:
        if bot.core.store.counts()["chunks"] == 0:
            print("The knowledge store is empty: loading the bundled demo knowledge base first.", file=sys.stderr)
            summary = bot.core.ingestor.ingest_paths([demo_kb_path()])
            print(f"ingest: {summary.line()}", file=sys.stderr)
    except BaseException:
        bot.close()
        raise
    return bot


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    question = " ".join(args.question).strip()
    if not question:
        raise UserError('the question is empty: navibot ask "can college students get SNAP?"')
    if len(question) > settings.max_question_chars:
        raise UserError(f"the question is {len(question):,} characters long; the limit is "
                        f"{settings.max_question_chars:,} (NAVIBOT_MAX_QUESTION_CHARS)")
    moods = MoodBook(settings.moods_file)
    if args.mood and moods.get(args.mood) is None:  # before anything is ingested
        raise UserError(f"unknown mood {args.mood!r}; choose one of: {', '.join(moods.names)}")
    bot = _open_bot_with_knowledge(args, settings)
    try:
        return ask(bot, question, args.mood, args.json)
    finally:
        bot.close()


def cmd_chat(args: argparse.Namespace, settings: Settings) -> int:
    bot = _open_bot_with_knowledge(args, settings)
    try:
        return chat(bot)
    finally:
        bot.close()


def _corpus_texts(path: Path) -> dict[str, str]:
    texts: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").split("\n"):
        try:
            record = json.loads(line) if line.strip() else None
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and isinstance(record.get("doc_id"), str):
            texts[record["doc_id"]] = squash(f"{record.get('title', '')} {record.get('text', '')}")
    return texts


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    if not args.questions.is_file():
        raise UserError(f"{args.questions}: no such file")
    if args.corpus and not args.corpus.exists():
        raise UserError(f"{args.corpus}: no such file or folder")
    try:
        questions = read_questions(args.questions)
        sectioned = is_section_set(questions)
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    # A JSONL corpus is checked for verbatim quotes against its own text; any other (Markdown, a folder) against
    # the stored paragraphs.
    jsonl_corpus = args.corpus is not None and args.corpus.is_file() and args.corpus.suffix.lower() == ".jsonl"
    with tempfile.TemporaryDirectory(prefix="navibot-eval-") as tmp:
        store = args.store or Path(tmp) / "eval.sqlite3"
        core = build_core(settings, store)
        try:
            if args.corpus:
                summary = core.ingestor.ingest_paths([args.corpus])
                print(f"ingest: {summary.line()}", file=sys.stderr)
                for problem in summary.problems:
                    print(f"skipped {problem}", file=sys.stderr)
            if core.store.counts()["chunks"] == 0:
                raise UserError("nothing to search: give --corpus, or --store with an ingested store")

            total = core.store.counts()["chunks"]
            engine = build_engine(core)
            mood = MoodBook(settings.moods_file).resolve(None)  # answers are evaluated in the default mood
            sources = _corpus_texts(args.corpus) if jsonl_corpus else {}

            def is_verbatim(citation: Citation) -> bool:
                """Checked against the corpus file itself when given, else against the stored paragraph."""
                if jsonl_corpus:
                    return squash(citation.quote) in sources.get(citation.doc_id, "")
                chunks = core.store.get_chunks([citation.chunk_id])
                return any(s.sub_id == citation.sub_id and s.text == citation.quote
                           for c in chunks for s in c.subchunks)

            def run(question: str, history: list[dict[str, str] | str]) -> EvalTurn:
                # Deepen until the ranking names at least 10 documents (or the store has no more chunks); a
                # section-gold set ranks chunks (MRR@10), so 10 are enough.
                depth = max(args.depth, 10) if not sectioned else max(10, settings.top_k)
                # A section set's history is the user's turns: answered first, as the thread would hold them.
                exchanges = engine.replay([str(h) for h in history], mood, k=depth) if sectioned else \
                    with_standalones(engine.rewriter, exchanges_from_messages(history))
                while True:
                    rewrite, hits = engine.rewrite_and_retrieve(question, exchanges, k=depth)
                    if sectioned or len(ranked_doc_ids(hits)) >= 10 or depth >= total:
                        break
                    depth *= 4
                outcome = engine.compose(question, exchanges, rewrite, hits, mood)
                paragraphs = []
                glossary = getattr(core.retriever, "glossary", None)  # the policy terms searched with it
                if sectioned:  # paragraph hit@3 is scored on section-gold sets only
                    expansion = glossary.expand(rewrite.standalone).text if glossary is not None else ""
                    paragraphs = [p.sub for p in rank_paragraphs(rewrite.standalone, hits, core.embedder,
                                                                 expansion=expansion)]
                # the evidence as the engine's gate read it: from all the hits, not only the answer's top_k
                return EvalTurn(hits, rewrite.standalone, outcome.text, outcome.kind != "answer", outcome.citations,
                                paragraphs, evidence(question, rewrite.standalone, hits, glossary))

            try:
                report = (evaluate_sections(questions, run, args.out) if sectioned
                          else evaluate(questions, run, args.out, is_verbatim))
            except ValueError as exc:  # a gold label that is not a paragraph path
                raise UserError(str(exc)) from exc
        finally:
            core.close()
    print(report.table())
    print(f"wrote {len(questions)} lines to {args.out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="navibot", description="Answers for benefits navigators, with quotes.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log more detail to stderr")
    sub = parser.add_subparsers(dest="command", required=True)

    ingest = sub.add_parser("ingest", help="add or update documents (files or folders, recursive)")
    ingest.add_argument("paths", nargs="*", help="Markdown, HTML, text, PDF or JSONL files, or folders")
    ingest.add_argument("--tags", help="comma-separated program tags added to every document, e.g. snap,medicaid")
    ingest.add_argument("--groups", help="comma-separated access groups for these documents (default: all)")
    ingest.add_argument("--prune", action="store_true",
                        help="delete stored documents under these paths whose files no longer exist")
    ingest.add_argument("--demo", action="store_true", help="also ingest the bundled demo knowledge base")
    ingest.add_argument("--store", type=Path, help="SQLite store file (default: from settings)")
    ingest.set_defaults(func=cmd_ingest)

    search = sub.add_parser("search", help="show the best-matching passages for a question")
    search.add_argument("question", nargs="+")
    search.add_argument("--k", type=int, help="how many passages (default: NAVIBOT_TOP_K, 5)")
    search.add_argument("--json", action="store_true", help="print JSON")
    search.add_argument("--tags", help="only documents with any of these comma-separated tags")
    search.add_argument("--groups", help="only documents visible to any of these comma-separated groups")
    search.add_argument("--store", type=Path)
    search.set_defaults(func=cmd_search)

    ev = sub.add_parser("eval", help="measure retrieval and answers on labelled questions (doc2dial format, or "
                                     "section-level gold: gold_section, gold_paths, answerable)")
    ev.add_argument("--corpus", type=Path, help="corpus ingested into a fresh store: JSONL, Markdown/HTML/PDF/text "
                                                "file, or a folder")
    ev.add_argument("--questions", type=Path, required=True)
    ev.add_argument("--out", type=Path, required=True, help="JSONL results, one line per question")
    ev.add_argument("--store", type=Path, help="use this store (ingested into when --corpus is also given)")
    ev.add_argument("--depth", type=int, default=60, help="chunks retrieved per question for the document ranking")
    ev.set_defaults(func=cmd_eval)
    ask_parser = sub.add_parser("ask", help="answer one question with quotes (loads the demo pages into an empty "
                                            "store)")
    ask_parser.add_argument("question", nargs="*")
    ask_parser.add_argument("--mood", help="answer tone, e.g. concise, formal, elderly, emoji (see `navibot chat`, "
                                           "`mood`)")
    ask_parser.add_argument("--json", action="store_true", help="print the reply as JSON")
    ask_parser.add_argument("--store", type=Path, help="SQLite store file (default: from settings)")
    ask_parser.set_defaults(func=cmd_ask)

    chat_parser = sub.add_parser("chat", help="an interactive conversation with history, commands and feedback")
    chat_parser.add_argument("--store", type=Path, help="SQLite store file (default: from settings)")
    chat_parser.set_defaults(func=cmd_chat)
    add_crawl_parser(sub)
    add_db_parser(sub)
    add_reindex_parser(sub)
    add_check_parser(sub)
    add_slack_parser(sub)
    add_teams_parser(sub)
    add_serve_parser(sub)
    add_admin_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # Before the settings are read: see bot/observability/logs.py.
    log_format = configure_cli_logging(args.command, args.verbose)

    def fail(message: str) -> None:
        """The one line of a failed command; a JSON log record when the logs are JSON (`navibot serve` in a
        container), so that a log shipper does not get one odd plain line at the moment it matters most."""
        if log_format == "json":
            logging.getLogger("navibot.cli").error(message, extra={"event": "failed", "command": args.command})
        else:
            print(f"navibot: {message}", file=sys.stderr)

    try:
        settings = Settings()
        if getattr(args, "k", None) is not None and args.k < 1:
            raise UserError("--k must be at least 1")
        code = int(args.func(args, settings))
        sys.stdout.flush()  # a reader that stopped early shows here, not as a traceback at exit
        return code
    except BrokenPipeError:  # `navibot stats | head -1`: the reader has seen enough, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python exits
        return 0
    except ValidationError as exc:
        problems = "; ".join(f"NAVIBOT_{'_'.join(map(str, e['loc'])).upper()}: "
                             + str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
        fail(f"invalid setting: {problems}")
    except (UserError, EmbeddingMismatch, MoodFileError, AccessError) as exc:
        fail(str(exc))
    except RuntimeError as exc:  # store cannot be opened, model files missing: say it plainly
        fail(str(exc))
    except KeyboardInterrupt:
        fail("interrupted")
        return 130
    return EXIT_USAGE


if __name__ == "__main__":
    raise SystemExit(main())
