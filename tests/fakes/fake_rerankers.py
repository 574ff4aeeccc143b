"""Local fakes of on-prem rerank servers that speak Cohere's v2 rerank API, as their sources and docs describe
the request and reply, for the real `cohere` SDK pointed at them (NAVIBOT_COHERE_BASE_URLS):

- vLLM (`vllm serve BAAI/bge-reranker-base`): POST /v2/rerank (also /rerank and /v1/rerank), no key needed;
  {"model", "query", "documents", "top_n"} -> {"id", "model", "usage": {"total_tokens"},
  "results": [{"index", "document": {"text"}, "relevance_score"}]}.
- Infinity (`infinity_emb v2 --url-prefix /v2`): POST {prefix}/rerank; {"query", "documents", "top_n",
  "return_documents", "raw_scores", "model"} -> {"object": "rerank", "results": [{"relevance_score", "index",
  "document": null}], "model", "usage": {"prompt_tokens", "total_tokens"}, "id", "created"}; extra fields ignored.
- Text Embeddings Inference speaks another shape: POST /rerank {"query", "texts", "truncate",
  "truncation_direction", "raw_scores", "return_text"} -> a bare list [{"index", "score", "text"?}], all texts
  scored, best first; an unknown field or a missing one is a 422 {"error", "error_type": "Validation"}.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from tests.fakes.fake_models import FakeServer, overlap


def _scored(body: dict[str, Any], texts: list[str]) -> list[tuple[int, float]]:
    scored = sorted(((i, overlap(body["query"], d)) for i, d in enumerate(texts)), key=lambda r: -r[1])
    return scored[: body.get("top_n") or len(texts)]


class FakeVllmRerank(FakeServer):
    def routes(self) -> list[web.RouteDef]:
        return [web.post(p, self.rerank) for p in ("/rerank", "/v1/rerank", "/v2/rerank")]

    def error(self, status: int, message: str = "fake error") -> web.Response:
        return web.json_response({"object": "error", "message": message, "type": "BadRequestError",
                                  "param": None, "code": status}, status=status)

    async def rerank(self, request: web.Request) -> web.Response:
        body, failure = await self._begin(request)
        problem = None if isinstance(body.get("documents"), list) and body.get("query") else "query and documents"
        failure = failure or self.malformed(problem)
        if failure is not None:
            return failure
        results = [{"index": i, "document": {"text": body["documents"][i]}, "relevance_score": s}
                   for i, s in _scored(body, body["documents"])]
        return web.json_response({"id": "rerank-fake", "model": body.get("model"), "usage": {"total_tokens": 42},
                                  "results": results})


class FakeInfinity(FakeServer):
    def __init__(self, url_prefix: str = "/v2") -> None:
        super().__init__()
        self.url_prefix = url_prefix

    def routes(self) -> list[web.RouteDef]:
        return [web.post(f"{self.url_prefix}/rerank", self.rerank)]

    def error(self, status: int, message: str = "fake error") -> web.Response:
        return web.json_response({"error": {"message": message, "type": "InvalidRequestError", "code": status}},
                                 status=status)

    async def rerank(self, request: web.Request) -> web.Response:
        body, failure = await self._begin(request)
        if failure is not None:
            return failure
        results = [{"relevance_score": s, "index": i, "document": None} for i, s in _scored(body, body["documents"])]
        return web.json_response({"object": "rerank", "results": results, "model": body.get("model"),
                                  "usage": {"prompt_tokens": 1, "total_tokens": 1}, "id": "infinity-fake",
                                  "created": 0})


TEI_FIELDS = {"query", "texts", "truncate", "truncation_direction", "raw_scores", "return_text"}


class FakeTei(FakeServer):
    def routes(self) -> list[web.RouteDef]:
        return [web.post("/rerank", self.rerank)]

    def error(self, status: int, message: str = "fake error") -> web.Response:
        kind = "Validation" if status == 422 else "Backend" if status >= 500 else "Overloaded"
        return web.json_response({"error": message, "error_type": kind}, status=status)

    async def rerank(self, request: web.Request) -> web.Response:
        body, failure = await self._begin(request)
        problem = None
        if set(body) - TEI_FIELDS:
            problem = f"unknown field {sorted(set(body) - TEI_FIELDS)[0]}"
        elif not isinstance(body.get("query"), str) or not isinstance(body.get("texts"), list) or not body["texts"]:
            problem = "missing field `query` or `texts`"
        if failure is None and problem is not None:
            self.refused.append(problem)
            return self.error(422, problem)
        if failure is not None:
            return failure
        scored = sorted(((i, overlap(body["query"], t)) for i, t in enumerate(body["texts"])), key=lambda r: -r[1])
        return web.json_response([{"index": i, "score": s} for i, s in scored])
