"""Unit tests of tb/models/replacement.py (pure Python, no simulator)."""

import random

import pytest

from models.replacement import LfsrRandom, TreePlru, TrueLru, lfsr16_next, make_policy


# ---------------------------------------------------------------- tree PLRU
class _Node:
    """An independent, object-based tree PLRU used as a cross-check of TreePlru."""

    def __init__(self, lo, n):
        self.lo, self.n = lo, n
        self.bit = 0
        if n > 1:
            left = 1 << ((n - 1).bit_length() - 1)
            self.left, self.right = _Node(lo, left), _Node(lo + left, n - left)

    def victim(self):
        if self.n == 1:
            return self.lo
        return (self.right if self.bit else self.left).victim()

    def touch(self, w):
        if self.n == 1:
            return
        if w < self.right.lo:
            self.bit = 1
            self.left.touch(w)
        else:
            self.bit = 0
            self.right.touch(w)

    def preorder(self):
        if self.n == 1:
            return []
        return [self.bit] + self.left.preorder() + self.right.preorder()


def test_plru_reset_victim_is_way0():
    for n in range(1, 33):
        assert TreePlru(n).victim() == 0
        assert TreePlru(n).state == 0


def test_plru_4way_by_hand():
    p = TreePlru(4)  # bits: [root, node(0,1), node(2,3)]
    p.touch(0)
    assert p.bits == [1, 1, 0] and p.victim() == 2
    p.touch(2)
    assert p.bits == [0, 1, 1] and p.victim() == 1
    p.touch(1)
    assert p.bits == [1, 0, 1] and p.victim() == 3
    p.touch(3)
    assert p.bits == [0, 0, 0] and p.victim() == 0
    assert p.state == 0


def test_plru_3way_layout():
    p = TreePlru(3)  # root splits into [0,1] (node 1) and [2]
    assert len(p.bits) == 2
    p.touch(2)
    assert p.bits == [0, 0] and p.victim() == 0
    p.touch(0)
    assert p.bits == [1, 1] and p.victim() == 2
    p.touch(2)
    assert p.victim() == 1


def test_plru_12way_layout():
    p = TreePlru(12)  # root: left 8 ways (7 nodes, bits 1..7), right 4 ways (3 nodes, bits 8..10)
    assert len(p.bits) == 11
    p.touch(0)
    assert p.bits[0] == 1 and p.victim() == 8
    p.touch(8)
    assert p.bits[0] == 0 and p.bits[8] == 1 and p.bits[9] == 1
    # touching 11 (right of node(8..11), right of node(10,11)) points both nodes left
    p.touch(11)
    assert p.bits[8] == 0 and p.bits[10] == 0 and p.bits[9] == 1
    assert p.victim() == 4  # root -> left; touching 0 pointed node(0..7) right -> 4..7 -> 4



@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 31, 32, 64])
def test_plru_matches_object_tree(n):
    rng = random.Random(n)
    a, b = TreePlru(n), _Node(0, n)
    for _ in range(2000):
        assert a.victim() == b.victim()
        assert a.bits == b.preorder()
        w = rng.randrange(n) if rng.random() < 0.7 else a.victim()
        a.touch(w)
        b.touch(w)


@pytest.mark.parametrize("n", [2, 4, 8, 16])
def test_plru_never_evicts_most_recent(n):
    rng = random.Random(1)
    p = TreePlru(n)
    for _ in range(1000):
        w = rng.randrange(n)
        p.touch(w)
        assert p.victim() != w


def test_plru_touching_victims_cycles_all_ways():
    # Holds for balanced trees (n a power of 2) only.
    for n in (2, 4, 8, 16, 32):
        p = TreePlru(n)
        seen = []
        for _ in range(n):
            v = p.victim()
            seen.append(v)
            p.touch(v)
        assert sorted(seen) == list(range(n)), (n, seen)


def test_plru_2way_is_lru():
    p, l = TreePlru(2), TrueLru(2)
    rng = random.Random(2)
    for _ in range(200):
        assert p.victim() == l.victim()
        w = rng.randrange(2)
        p.touch(w)
        l.touch(w)


# ---------------------------------------------------------------- true LRU
def test_lru():
    l = TrueLru(4)
    assert l.victim() == 0
    l.touch(0)
    assert l.order == [1, 2, 3, 0] and l.victim() == 1
    l.touch(2)
    l.touch(1)
    assert l.order == [3, 0, 2, 1] and l.victim() == 3
    l.on_evict()
    assert l.victim() == 3
    l.reset()
    assert l.order == [0, 1, 2, 3]


# ---------------------------------------------------------------- LFSR random
def test_lfsr_sequence():
    s = 1
    seq = []
    for _ in range(12):
        s = lfsr16_next(s)
        seq.append(s)
    assert seq[:11] == [0xB400, 0x5A00, 0x2D00, 0x1680, 0x0B40, 0x05A0, 0x02D0, 0x0168, 0x00B4,
                        0x005A, 0x002D]
    assert seq[11] == (0x002D >> 1) ^ 0xB400


def test_lfsr_is_maximal_length():
    s, n = 1, 0
    while True:
        s = lfsr16_next(s)
        n += 1
        if s == 1:
            break
        assert n < 70000
    assert n == 65535


def test_random_victim_and_advance():
    r = LfsrRandom(12)
    assert r.victim() == 0  # s = 1: (1 * 12) >> 8 = 0
    r.touch(5)  # touches do not move the LFSR
    assert r.state == 1
    r.on_evict()
    assert r.state == 0xB400 and r.victim() == 0  # low byte 0
    for _ in range(3):
        r.on_evict()
    assert r.state == 0x1680 and r.victim() == (0x80 * 12) >> 8 == 6
    for n in (1, 2, 3, 16):
        q = LfsrRandom(n)
        for _ in range(500):
            assert 0 <= q.victim() < n
            q.on_evict()


def test_make_policy():
    assert isinstance(make_policy("plru", 4), TreePlru)
    assert isinstance(make_policy("lru", 4), TrueLru)
    assert isinstance(make_policy("random", 4), LfsrRandom)
    with pytest.raises(ValueError):
        make_policy("fifo", 4)
