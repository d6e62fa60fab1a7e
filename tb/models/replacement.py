"""Replacement policies, bit-exact with docs/babelfish-tlb.md ("Replacement policies").

Every policy object manages ONE set (or one fully associative array) of ``n`` ways and offers:

* ``victim()``       the way rule 3 of a fill would replace (pure, no state change);
* ``touch(way)``     a hit served by / a fill written to ``way``;
* ``on_evict()``     called when a fill actually took ``victim()`` (rule 3); only the random
                     policy changes state here (the LFSR advances);
* ``state``          an integer snapshot of the state (for debugging and dbg_* port checks).

The policies are shared by every block of the library (xlat.common.ReplacementPolicy).
"""

from __future__ import annotations


def _clog2(n: int) -> int:
    """ceil(log2(n)) for n >= 1."""
    return (n - 1).bit_length()


class TreePlru:
    """Tree pseudo-LRU over ways [0, n), any n >= 1.

    A node over m > 1 ways splits into a left subtree of l = 2^(ceil(log2 m) - 1) ways and a right
    subtree of m - l ways.  Node bit 0 = the victim is in the left subtree, 1 = right.  Touch sets
    every node on the way's path to point away from it.  Bits are numbered in preorder (node,
    left subtree, right subtree): preorder node i is bit i of ``state`` (bit 0 = root, the LSB).
    n - 1 bits, reset 0 (victim way 0).
    """

    name = "plru"

    def __init__(self, n: int):
        if n < 1:
            raise ValueError(f"TreePlru needs n >= 1, got {n}")
        self.n = n
        self.bits = [0] * (n - 1)

    def reset(self) -> None:
        self.bits = [0] * (self.n - 1)

    # The tree is walked recursively: (first way, number of ways, preorder index of the node).
    @staticmethod
    def _split(m: int) -> int:
        return 1 << (_clog2(m) - 1)

    def victim(self) -> int:
        lo, m, idx = 0, self.n, 0
        while m > 1:
            left = self._split(m)
            if self.bits[idx] == 0:
                m, idx = left, idx + 1
            else:
                lo, m, idx = lo + left, m - left, idx + left  # left subtree holds left-1 nodes
        return lo

    def touch(self, way: int) -> None:
        if not 0 <= way < self.n:
            raise ValueError(f"way {way} out of range [0, {self.n})")
        lo, m, idx = 0, self.n, 0
        while m > 1:
            left = self._split(m)
            if way < lo + left:
                self.bits[idx] = 1  # way is on the left: point right
                m, idx = left, idx + 1
            else:
                self.bits[idx] = 0  # way is on the right: point left
                lo, m, idx = lo + left, m - left, idx + left

    def on_evict(self) -> None:
        pass

    @property
    def state(self) -> int:
        return sum(b << i for i, b in enumerate(self.bits))

    def __repr__(self) -> str:
        return f"TreePlru(n={self.n}, bits={self.bits})"


class TrueLru:
    """True LRU: order from least to most recently used, reset [0, 1, ..., n-1]."""

    name = "lru"

    def __init__(self, n: int):
        if n < 1:
            raise ValueError(f"TrueLru needs n >= 1, got {n}")
        self.n = n
        self.order = list(range(n))

    def reset(self) -> None:
        self.order = list(range(self.n))

    def victim(self) -> int:
        return self.order[0]

    def touch(self, way: int) -> None:
        if not 0 <= way < self.n:
            raise ValueError(f"way {way} out of range [0, {self.n})")
        self.order.remove(way)
        self.order.append(way)

    def on_evict(self) -> None:
        pass

    @property
    def state(self) -> int:
        """The order packed LSB-first, ceil(log2 n) bits per position (position 0 = LRU)."""
        w = max(1, _clog2(self.n))
        return sum(way << (i * w) for i, way in enumerate(self.order))

    def __repr__(self) -> str:
        return f"TrueLru(n={self.n}, order={self.order})"


LFSR_TAPS = 0xB400
LFSR_RESET = 1


def lfsr16_next(s: int) -> int:
    """16-bit Galois LFSR step: next = (s >> 1) ^ (s & 1 ? 0xB400 : 0)."""
    return (s >> 1) ^ (LFSR_TAPS if s & 1 else 0)


class LfsrRandom:
    """Random: one 16-bit Galois LFSR per array, reset 1.

    victim = ((s & 0xFF) * n) >> 8; the LFSR advances only when a fill takes the victim.
    Touches do not change the state.
    """

    name = "random"

    def __init__(self, n: int):
        if n < 1:
            raise ValueError(f"LfsrRandom needs n >= 1, got {n}")
        self.n = n
        self.s = LFSR_RESET

    def reset(self) -> None:
        self.s = LFSR_RESET

    def victim(self) -> int:
        return ((self.s & 0xFF) * self.n) >> 8

    def touch(self, way: int) -> None:
        if not 0 <= way < self.n:
            raise ValueError(f"way {way} out of range [0, {self.n})")

    def on_evict(self) -> None:
        self.s = lfsr16_next(self.s)

    @property
    def state(self) -> int:
        return self.s

    def __repr__(self) -> str:
        return f"LfsrRandom(n={self.n}, s=0x{self.s:04x})"


POLICIES = {"plru": TreePlru, "lru": TrueLru, "random": LfsrRandom}


def make_policy(name: str, n: int):
    try:
        return POLICIES[name](n)
    except KeyError:
        raise ValueError(f"unknown replacement policy {name!r}; legal: {sorted(POLICIES)}") from None
