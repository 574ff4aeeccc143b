"""A light load generator: sends pre-built HTTP requests all at once, from its own process, and times each one.

    python benchmarks/load_burst.py HOST PORT [--preconnected] < requests.json > results.json

stdin: a JSON list of raw HTTP/1.1 requests (strings: request line, headers, blank line, body), already signed by
the caller. Each is sent on its own new TCP connection (as Slack opens them), all started together on one event
loop; nothing else runs in this process, so the times are not inflated by the fake servers or by the work of
building and signing the requests (benchmarks/serve_harness.py does that beforehand). stdout: JSON
`{"acks": [...], "cpu_ms": ...}`: one `[status, sent_at, ack_ms]` per request in order (`sent_at` is
time.monotonic() when the connection was opened, the system-wide clock, comparable with the fake Slack's stamps in
the other process; `ack_ms` the time until the whole response was read; status 0 when the connection failed), and
this process's CPU time over the burst (the generator shares the machine's 2 cores with the server it times).

--preconnected: every connection is opened first (untimed: the server accepts them and waits), then all the
requests are written together; `sent_at` and the time start at the write, so the figure is the server's own
handling of the requests, without the TCP connection set-up of 200 sockets on both sides.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def one(host: str, port: int, raw: bytes, timeout: float, opened: Connection | None = None
              ) -> tuple[int, float, float]:
    sent_at, started = time.monotonic(), time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            reader, writer = opened or await asyncio.open_connection(host, port)
            writer.write(raw)
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if length:
                await reader.readexactly(length)
            status = int(head.split(b" ", 2)[1])
            writer.close()
    except (OSError, TimeoutError, asyncio.IncompleteReadError, ValueError):
        status = 0
    return status, sent_at, (time.perf_counter() - started) * 1000


async def burst(host: str, port: int, requests: list[bytes], preconnected: bool = False, timeout: float = 60.0
                ) -> list[tuple[int, float, float]]:
    opened: list[Connection | None] = [None] * len(requests)
    if preconnected:
        opened = list(await asyncio.gather(*(asyncio.open_connection(host, port) for _ in requests)))
        await asyncio.sleep(0.5)  # the server has accepted them all
    return list(await asyncio.gather(*(one(host, port, raw, timeout, conn)
                                       for raw, conn in zip(requests, opened, strict=True))))


def main() -> int:
    host, port = sys.argv[1], int(sys.argv[2])
    requests = [r.encode("utf-8") for r in json.load(sys.stdin)]
    started = time.process_time()
    acks = asyncio.run(burst(host, port, requests, "--preconnected" in sys.argv[3:]))
    # This process's own CPU over the burst: on a 2-core machine it shares the cores with the server it times.
    json.dump({"acks": acks, "cpu_ms": (time.process_time() - started) * 1000}, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
