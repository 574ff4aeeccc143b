"""Which processes holding event claims on this machine are still alive.

A process that claims an event takes an exclusive `flock` on a file of its own, `<folder>/<owner>.lock` (beside
the SQLite conversation store; in the data folder for MongoDB, for claims made on the same host), and keeps it
while it runs. The kernel drops the lock when the process dies, however it dies (`kill -9`, a power cut
of the container): a claim whose owner's file is not locked any more belongs to a dead process and can be taken
over at once, so a question cut short by a crash is answered when it is delivered again, not lost for the lease.
Where `flock` does not exist (Windows) or the folder cannot be written, every holder counts as alive and only
the lease frees a claim.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)


class OwnerLocks:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.owner = uuid.uuid4().hex[:16]
        self._held: IO[str] | None = None

    def hold(self) -> str:
        """This process's owner id, its lock taken on first use (a store only read by `navibot stats` takes none)."""
        if self._held is None and fcntl is not None:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                held = (self.folder / f"{self.owner}.lock").open("w")
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._held = held
            except OSError as exc:
                log.warning("event claims: cannot lock %s (%s); a claim of a crashed process is freed only after "
                            "its lease", self.folder, exc)
        return self.owner

    def alive(self, owner: str | None) -> bool:
        """False when `owner` is known to be gone: its lock file is missing or nobody holds its lock."""
        if not owner:
            return False
        if fcntl is None or owner == self.owner:
            return True
        path = self.folder / f"{owner}.lock"
        try:
            probe = path.open("a")
        except FileNotFoundError:
            return False  # closed cleanly (its file removed) or never locked
        except OSError:
            return True  # cannot tell: trust the lease
        with probe:
            try:
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # BlockingIOError: held by a live process; anything else: cannot tell
                return True
            path.unlink(missing_ok=True)  # a dead owner's file: tidy it away (the lock goes with the close)
            return False

    def close(self) -> None:
        if self._held is not None:
            (self.folder / f"{self.owner}.lock").unlink(missing_ok=True)
            self._held.close()
            self._held = None
