"""The worker process's C allocator: large blocks go back to the system when freed.

glibc's malloc serves a request of 128 KiB or more from a mapping of its own, unmapped when it
is freed, but raises that threshold to the size of each such block freed (up to 32 MiB): after
a worker's first large answer, the JSON texts, base64 copies and sitemap bodies of the next
ones come from the heap, which keeps the room they leave, and the next large answer's peak
comes on top of it (docs/benchmarks.md, Map speed). A fixed threshold keeps large blocks
mapped, and given back, whatever was freed before.
"""

from __future__ import annotations

import ctypes

#: glibc's ``mallopt`` parameter number of the mapping threshold (``<malloc.h>``).
M_MMAP_THRESHOLD = -3
#: Bytes from which a block is mapped: above a page's HTML, below a large answer's copies.
LARGE_BLOCK = 1024 * 1024


def give_back_large_blocks() -> bool:
    """Fix glibc's mapping threshold at :data:`LARGE_BLOCK` for this process; whether it
    was set (not with another C library)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, LARGE_BLOCK))
