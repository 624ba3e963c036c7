"""The worker's C allocator setting (``worker.allocator``): set on glibc, refused quietly
elsewhere."""

from __future__ import annotations

import platform

from worker.allocator import give_back_large_blocks


def test_the_mapping_threshold_is_set_on_glibc() -> None:
    assert give_back_large_blocks() is (platform.libc_ver()[0] == "glibc")
