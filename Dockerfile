# Navibot: `navibot serve` (Slack + Teams on one port, /healthz, /metrics). Build: docker build -t navibot .
FROM python:3.12-slim

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# The dependencies, in a layer rebuilt only when the lock file changes (not on every source edit): every package
# pinned with its hashes (uv, docs/reproducible-installs.md); pip refuses anything unpinned or unhashed. The lock
# also pins the build backend (setuptools), used below without build isolation so nothing is fetched unpinned.
COPY requirements.lock ./
RUN pip install --require-hashes -r requirements.lock && pip check

# The project itself, without its dependencies (already there). Editable, so the manifests next to the code are
# found by `navibot teams package`; the demo knowledge base is package data (rag/demo_kb).
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY rag ./rag
COPY adapters ./adapters
COPY manifests ./manifests
# COPY keeps the checkout's file modes: a checkout made with umask 077 would leave the code unreadable to the
# non-root user below. Readable by all, writable by none of them.
RUN pip install --no-deps --no-build-isolation -e . && chmod -R a+rX,go-w /app

# Not root: the bot needs to write only to its data directory.
RUN useradd --create-home --uid 10001 navibot && mkdir -p /data && chown navibot:navibot /data
USER navibot

# SQLite stores (knowledge, conversations), the crawl state: keep them on a volume. Two malloc arenas instead of
# one per busy thread: the peak with 50 questions at once on 10k chunks drops from 371 to 232 MB
# (benchmarks/RESULTS.md, bench_memory).
ENV NAVIBOT_DATA_DIR=/data \
    NAVIBOT_HOST=0.0.0.0 \
    NAVIBOT_PORT=8080 \
    MALLOC_ARENA_MAX=2
VOLUME /data
EXPOSE 8080

# slim has no curl: python's urllib; a 503 (store unreachable, shutting down) raises, so the check fails.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('NAVIBOT_PORT', '8080') + '/healthz', timeout=4)"]

CMD ["navibot", "serve"]
