"""How often each paragraph of a corpus is among the 3 best for the other paragraphs' opening words (research).

    .venv/bin/python benchmarks/paragraph_hubs.py ../shared/corpus/snap/7-cfr-273.md /tmp/hubs_cfr.json
    NAVIBOT_LTR_HUBS=/tmp/hubs_cfr.json,/tmp/hubs_d2d.json .venv/bin/python benchmarks/paragraph_ltr.py train ...

A "hub" paragraph shares everyday words with any question and ranks high for many unrelated ones. This counts it
from the corpus alone: every paragraph's first 12 words (its leading labels dropped) are searched as a query with
the embedded default, and each of the 3 best paragraphs other than the query's own is counted once. The counts feed
`benchmarks/paragraph_ltr.py`'s research feature `hub`; findings are in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # measure this checkout

QUERY_WORDS = 12
TOP = 3
_LABELS = re.compile(r"^\s*(?:\([0-9a-zA-Z]+\)\s*)+")


def hub_counts(corpus: Path) -> tuple[int, Counter[str]]:
    from bot.config.settings import Settings  # benchmarks may build the bot's core; rag/ never imports bot/
    from bot.wiring.runtime import build_core
    from rag.search.sqlite_store import SQLiteKnowledgeStore

    counts: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="navibot-hubs-") as tmp:
        os.environ["NAVIBOT_DATA_DIR"] = tmp
        core = build_core(Settings(), Path(tmp) / "hubs.sqlite3")
        try:
            core.ingestor.ingest_paths([corpus])
            store = core.store
            if not isinstance(store, SQLiteKnowledgeStore):
                raise SystemExit("the embedded (SQLite) store is needed to list every section")
            ids, _ = store.section_vectors()
            subs = [s for c in store.get_chunks(list(ids)) for s in c.subchunks]
            for sub in subs:
                words = _LABELS.sub("", sub.text).split()[:QUERY_WORDS]
                if len(words) < 4:
                    continue
                ranks: dict[str, int] = {}
                for hit in core.retriever.search(" ".join(words), k=5):
                    for sub_id, rank in hit.paragraph_ranks.items():
                        ranks[sub_id] = min(rank, ranks.get(sub_id, rank))
                counts.update(s for s in sorted(ranks, key=ranks.__getitem__)[:TOP] if s != sub.sub_id)
        finally:
            core.close()
    return len(subs), counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    n, counts = hub_counts(args.corpus)
    args.out.write_text(json.dumps({"queries": n, "count": counts}), encoding="utf-8")
    print(f"{n} paragraphs; most counted: {counts.most_common(5)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
