"""The aggregation pipelines of retrieval, built as plain data (checked in tests against the documented shapes).

- `$vectorSearch` (Atlas Vector Search): approximate nearest neighbours over the section vectors, or exact
  when asked; tags and groups are pre-filters on the index's `filter` fields.
- `$search` (Atlas Search): full text over the heading line (boosted) and the body, with the same filters.
- `$rankFusion` (MongoDB 8.0+): both of the above in one round trip; `scoreDetails` carries each document's
  rank in each input pipeline, which the app needs (it fuses them with its sentence rankings).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rag.search.store import Filters
from rag.search.terms import question_terms

# Title and heading words weigh 8x body words, as in the SQLite store (measured on doc2dial, RESULTS.md).
HEADING_BOOST = 8.0
MAX_NUM_CANDIDATES = 10_000  # Atlas Vector Search refuses more
VECTOR, LEXICAL = "vector", "lexical"  # $rankFusion input pipeline names


@dataclass(frozen=True, slots=True)
class SearchOptions:
    vector_index: str = "navibot_vector"
    search_index: str = "navibot_text"
    num_candidates_factor: int = 20  # numCandidates = factor x limit (MongoDB recommends at least 20)
    exact: bool = False  # exact nearest neighbours (ENN): every vector compared, slower, no recall loss
    rank_fusion: bool = True  # use $rankFusion when the server has it


def vector_filter(filters: Filters) -> dict[str, Any] | None:
    """MQL pre-filter for $vectorSearch on the lowercased `tags` and `groups` arrays ($in matches any element)."""
    clauses: list[dict[str, Any]] = []
    if filters.tags:
        clauses.append({"tags": {"$in": sorted(filters.tags)}})
    if filters.groups:
        clauses.append({"groups": {"$in": sorted(filters.groups)}})
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def vector_search_stage(vector: list[float], limit: int, filters: Filters, options: SearchOptions) -> dict[str, Any]:
    stage: dict[str, Any] = {"index": options.vector_index, "path": "embedding", "queryVector": vector,
                             "limit": limit}
    if options.exact:
        stage["exact"] = True  # ENN takes no numCandidates
    else:
        stage["numCandidates"] = min(max(limit * options.num_candidates_factor, limit), MAX_NUM_CANDIDATES)
    where = vector_filter(filters)
    if where is not None:
        stage["filter"] = where
    return {"$vectorSearch": stage}


def search_query(question: str) -> str:
    """The question's topic words (the words the SQLite store matches too); empty = nothing to search."""
    return " ".join(question_terms(question)[:64])


def search_stage(query: str, filters: Filters, options: SearchOptions) -> dict[str, Any]:
    compound: dict[str, Any] = {
        "should": [
            {"text": {"query": query, "path": "heading", "score": {"boost": {"value": HEADING_BOOST}}}},
            {"text": {"query": query, "path": "text"}},
        ],
        "minimumShouldMatch": 1,
    }
    where = [{"in": {"path": field, "value": sorted(values)}}
             for field, values in (("tags", filters.tags), ("groups", filters.groups)) if values]
    if where:
        compound["filter"] = where
    return {"$search": {"index": options.search_index, "compound": compound}}


def vector_pipeline(vector: list[float], limit: int, filters: Filters, options: SearchOptions) -> list[dict[str, Any]]:
    return [vector_search_stage(vector, limit, filters, options),
            {"$project": {"_id": 1, "score": {"$meta": "vectorSearchScore"}}}]


def lexical_pipeline(query: str, limit: int, filters: Filters, options: SearchOptions) -> list[dict[str, Any]]:
    return [search_stage(query, filters, options), {"$limit": limit},
            {"$project": {"_id": 1, "score": {"$meta": "searchScore"}}}]


def rank_fusion_pipeline(vector: list[float], query: str, limit: int, filters: Filters,
                         options: SearchOptions) -> list[dict[str, Any]]:
    """Both searches in one stage; input pipelines may only select and rank, so the projection comes after."""
    return [
        {"$rankFusion": {
            "input": {"pipelines": {
                VECTOR: [vector_search_stage(vector, limit, filters, options)],
                LEXICAL: [search_stage(query, filters, options), {"$limit": limit}],
            }},
            "combination": {"weights": {VECTOR: 1, LEXICAL: 1}},
            "scoreDetails": True,
        }},
        {"$project": {"_id": 1, "details": {"$meta": "scoreDetails"}}},
    ]


def ranks_from_details(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Each input pipeline's ranking, read from the scoreDetails of $rankFusion's output.

    Servers have written the per-pipeline details as a list of {inputPipelineName, rank, ...} and (8.0 previews)
    as a map of name -> {rank, ...}; both are read. A document a pipeline did not return has no rank there.
    """
    ranked: dict[str, list[tuple[int, str]]] = {VECTOR: [], LEXICAL: []}
    for row in rows:
        details = (row.get("details") or {}).get("details") or []
        items = ([(d.get("inputPipelineName"), d) for d in details] if isinstance(details, list)
                 else list(details.items()) if isinstance(details, dict) else [])
        for name, detail in items:
            rank = detail.get("rank") if isinstance(detail, dict) else None
            if name in ranked and isinstance(rank, (int, float)) and not isinstance(rank, bool) and rank > 0:
                ranked[name].append((int(rank), str(row["_id"])))
    return {name: [cid for _, cid in sorted(pairs)] for name, pairs in ranked.items()}
