"""The memory image shared by the harnesses that walk page tables in memory (sim/harness/
walker.cpp, sim/harness/perforated.cpp; read by `xlat::load_memory` in sim/harness/common.h):
sparse 64-bit words, little-endian "XLATWM01", u64 n, u64 addr[n], u64 data[n] (sorted by
address, 8-byte aligned; a word not in the image reads 0)."""
from __future__ import annotations

import numpy as np

MEM_MAGIC = b"XLATWM01"


def write_memory(words: dict, path) -> int:
    """Write ``words`` ({byte address: 64-bit word}); returns the number of words."""
    items = sorted(words.items())
    addr = np.fromiter((a for a, _ in items), dtype="<u8", count=len(items))
    data = np.fromiter((v for _, v in items), dtype="<u8", count=len(items))
    if len(addr) and np.any(addr & 7):
        raise ValueError("memory image: word addresses must be 8-byte aligned")
    with open(path, "wb") as f:
        f.write(MEM_MAGIC)
        f.write(np.uint64(len(addr)).tobytes())
        f.write(addr.tobytes())
        f.write(data.tobytes())
    return len(addr)
