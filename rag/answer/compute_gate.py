"""How many turns do Python CPU work at once (search, the extractive answer, the citation rail).

Why: the turns run in threads (bot/wiring/runtime.py) and share the GIL with the server's event loop, which
acknowledges Slack and Teams requests. With N threads runnable on CPU the loop waits up to N x the switch interval
(5 ms) for every GIL acquisition, so a burst of questions arriving while an earlier burst is being answered saw its
acks take 0.3-1 s. The gate lets at most `slots` turns into their CPU stages; the others wait on a semaphore, which
releases the GIL. A turn gives its slot up while it waits on a hosted model (`waiting_on_model`, called by
rag/providers/failover.py around each call and by the engine around each read of a streamed answer), so model
waits of many turns still overlap.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_held: ContextVar[ComputeGate | None] = ContextVar("navibot_compute_gate", default=None)


class ComputeGate:
    """At most `slots` turns inside `held()` at once; `slots` None or 0: no limit (the gate does nothing)."""

    def __init__(self, slots: int | None) -> None:
        self.slots = slots or None
        self._semaphore = threading.BoundedSemaphore(slots) if slots else None

    @contextmanager
    def held(self) -> Iterator[None]:
        """The turn's CPU stages. Re-entering while already held (a nested call) does not take a second slot."""
        if self._semaphore is None or _held.get() is self:
            yield
            return
        self._semaphore.acquire()
        token = _held.set(self)
        try:
            yield
        finally:
            _held.reset(token)
            self._semaphore.release()


@contextmanager
def waiting_on_model() -> Iterator[None]:
    """Around a blocking call to a hosted model: the turn's slot (if it holds one) goes to another turn for the
    wait, and is taken back before the turn's CPU work resumes. Outside a gated turn it does nothing."""
    gate = _held.get()
    if gate is None or gate._semaphore is None:
        yield
        return
    token = _held.set(None)  # a nested wait (a fallback inside the call) has nothing to give up
    gate._semaphore.release()
    try:
        yield
    finally:
        gate._semaphore.acquire()
        _held.reset(token)
