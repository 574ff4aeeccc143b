"""A local website for crawl tests and benchmarks: aiohttp.web on 127.0.0.1 (ephemeral port) in a background
thread, so the crawler under test runs its own event loop unchanged. Every request is recorded.

Bodies may contain `{base}` (the site's root URL) and `{port}`, filled in when served: the port is only known then.
"""

from __future__ import annotations

import asyncio
import gzip
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from aiohttp import web

FIXTURES = Path(__file__).parents[1] / "fixtures" / "crawl" / "site"
_TYPES = {".html": "text/html; charset=utf-8", ".xml": "application/xml", ".txt": "text/plain",
          ".pdf": "application/pdf"}


@dataclass(slots=True)
class Resp:
    """How the site answers one path."""

    body: bytes | str = ""
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering (a slow page)
    etag: str | None = None  # answer 304 to a matching If-None-Match
    last_modified: str | None = None  # answer 304 to an equal If-Modified-Since
    stream: bool = False  # send without Content-Length, in pieces
    gzip: bool = False  # gzip the body (as a sitemap.xml.gz file is)


@dataclass(frozen=True, slots=True)
class Hit:
    path: str  # path and query as requested
    host: str
    headers: dict[str, str]
    at: float  # time.monotonic() when the request arrived


Route = Resp | Callable[[web.Request], Resp]


class Site:
    """`with Site(routes) as site:`; `site.url("/a")`; `site.paths()` lists what was requested, in order."""

    def __init__(self, routes: Mapping[str, Route] | None = None) -> None:
        self.routes: dict[str, Route] = dict(routes or {})
        self.hits: list[Hit] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def from_fixtures(cls, folder: Path = FIXTURES) -> Site:
        routes: dict[str, Route] = {}
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                rel = "/" + path.relative_to(folder).as_posix()
                routes[rel] = Resp(path.read_text(encoding="utf-8"), content_type=_TYPES.get(path.suffix, "text/html"))
                if path.name == "index.html":
                    routes[rel.removesuffix("index.html")] = routes[rel]
        return cls(routes)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.base + path

    def paths(self) -> list[str]:
        return [h.path for h in self.hits]

    def hits_for(self, path: str) -> list[Hit]:
        return [h for h in self.hits if h.path == path]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.hits.append(Hit(request.path_qs, request.host, dict(request.headers), time.monotonic()))
        route = self.routes.get(request.path_qs, self.routes.get(request.path))
        if route is None:
            return web.Response(status=404, text="<h1>Not found</h1>", content_type="text/html")
        spec = route(request) if callable(route) else route
        if spec.delay:
            await asyncio.sleep(spec.delay)
        headers = dict(spec.headers)
        if spec.etag:
            headers["ETag"] = spec.etag
        if spec.last_modified:
            headers["Last-Modified"] = spec.last_modified
        if (spec.etag and request.headers.get("If-None-Match") == spec.etag) or (
                spec.last_modified and request.headers.get("If-Modified-Since") == spec.last_modified):
            return web.Response(status=304, headers=headers)
        body = spec.body if isinstance(spec.body, bytes) else (
            spec.body.replace("{base}", self.base).replace("{port}", str(self.port)).encode())
        if spec.gzip:
            body = gzip.compress(body)
        headers["Content-Type"] = spec.content_type
        if not spec.stream:
            return web.Response(status=spec.status, body=body, headers=headers)
        response = web.StreamResponse(status=spec.status, headers=headers)
        await response.prepare(request)
        for start in range(0, len(body), 64 * 1024):
            await response.write(body[start:start + 64 * 1024])
        await response.write_eof()
        return response

    def __enter__(self) -> Self:
        ready = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(self._loop)
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", self._handle)
            self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
            self._loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            self._loop.run_until_complete(site.start())
            self.port = self._runner.addresses[0][1]
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=serve, name="crawl-test-site", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the local test site did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        self._loop.close()


def redirect(location: str, status: int = 301) -> Resp:
    return Resp(status=status, headers={"Location": location}, body="")


def fixture_site(pdf: bytes) -> Site:
    """The fixture pages plus what files cannot express: redirects, a redirect loop, a linked PDF."""
    site = Site.from_fixtures()
    site.routes.update({
        "/benefits/old-wic.html": redirect("/benefits/wic.html"),
        "/benefits/loop-a.html": redirect("/benefits/loop-b.html", 302),
        "/benefits/loop-b.html": redirect("/benefits/loop-a.html", 302),
        "/files/snap-application.pdf": Resp(pdf, content_type="application/pdf",
                                            last_modified="Sun, 01 Mar 2026 12:00:00 GMT"),
    })
    return site
