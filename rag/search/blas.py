"""One BLAS thread for the store's matrix products.

A search multiplies a few thousand vectors by one question vector, a job for one core. numpy's OpenBLAS splits
each product across every core and makes the threads meet: with the bot's turn threads and other processes busy
on the cores, they wait for each other. Measured on the shared 2-core machine (10k chunks, the same store, the same
run): a matrix-vector product 5.3 ms with OpenBLAS's 2 threads, 0.32 ms with one; search median 49.5 -> 9.7 ms.
threadpoolctl (the library scikit-learn uses for this) sets it for the whole process, once.
"""

from __future__ import annotations

import functools
import logging

from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

log = logging.getLogger(__name__)


@functools.cache  # once per process (cache_clear() to do it again)
def single_threaded_blas() -> None:
    """Limit the process's BLAS libraries to one thread (a failure is logged, never raised)."""
    try:
        threadpool_limits(limits=1, user_api="blas")
    except Exception as exc:  # noqa: BLE001 - a BLAS we cannot limit only costs speed
        log.warning("could not limit BLAS to one thread (%s); searches may be slower under load", exc)
