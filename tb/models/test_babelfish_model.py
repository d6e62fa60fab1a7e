"""Unit tests of the BabelFishTlb reference model (pure Python, hand-derived expectations)."""

import pytest

from models.babelfish import BabelFishModel, BabelFishParams, GLOBAL, PRIVATE, SHARED

L1 = dict(sets=16, ways=4, superpageEntries=8, vpnBits=36, ppnBits=40, pcidBits=12, ccidBits=12,
          pcBits=32, sharing=True, replacement="plru", storage="flops")
FORMAL = dict(sets=2, ways=2, superpageEntries=2, vpnBits=20, ppnBits=27, pcidBits=2, ccidBits=2,
              pcBits=3, sharing=True, replacement="plru", storage="flops")


def mk(**over):
    return BabelFishModel(BabelFishParams.from_dict({**L1, **over}))


def rd(m, vpn, pcid, ccid, **kw):
    return m.lookup(vpn=vpn, pcid=pcid, ccid=ccid, **kw).resp


def test_params_derived():
    p = BabelFishParams.from_dict(L1)
    assert p.setBits == 4 and p.pcIdxBits == 5 and p.latency == 4
    assert BabelFishParams.from_dict(FORMAL).pcIdxBits == 2
    assert BabelFishParams.from_dict({**L1, "pcBits": 1}).pcIdxBits == 1


def test_timing_rule():
    """Doc "Timing": the write shadow is latency - 1 cycles (latency 4: 4, the commit cycle;
    sram 5 and 6: 5);
    an sram sweep (kinds 2/3, more than one set) keeps the TLB busy sets - 1 + shadow cycles;
    legal latencies per storage."""
    doc_shadow = {1: 0, 2: 1, 3: 2, 4: 4}
    for lat in (1, 2, 3, 4):
        p = BabelFishParams.from_dict({**L1, "latency": lat})
        assert p.busy_after_fill() == doc_shadow[lat]
        assert [p.busy_after_inval(k) for k in range(8)] == [doc_shadow[lat]] * 8
    # sram 5: the commit as at 4 plus the second row register; sram 6: one less, the operation
    # register delays a later operation's read as much as the write
    sram_shadow = {2: 1, 3: 2, 4: 4, 5: 5, 6: 5}
    for lat in (2, 3, 4, 5, 6):
        p = BabelFishParams.from_dict({**L1, "storage": "sram", "latency": lat})
        sh = sram_shadow[lat]
        assert p.busy_after_fill() == sh
        assert [p.busy_after_inval(k) for k in range(8)] == [sh] * 2 + [15 + sh] * 2 + [sh] * 4
    one_set = BabelFishParams.from_dict({**L1, "sets": 1, "storage": "sram", "latency": 2})
    assert one_set.busy_after_inval(2) == 1
    for bad in ({"storage": "sram", "latency": 1}, {"latency": 5}, {"latency": 0},
                {"storage": "sram", "latency": 7}):
        with pytest.raises(ValueError):
            BabelFishParams.from_dict({**L1, **bad})


def test_private_match_rule():
    m = mk()
    m.fill(vpn=0x123, ppn=0x777, pageSize=0, pcid=1, ccid=2, own=1)
    r = rd(m, 0x123, 1, 2)
    assert r["hit"] == 1 and r["ppn"] == 0x777 and r["shared"] == 0 and r["crossHit"] == 0
    assert rd(m, 0x123, 1, 3)["hit"] == 0  # other ccid
    assert rd(m, 0x123, 2, 2)["hit"] == 0  # other pcid
    assert rd(m, 0x124, 1, 2)["hit"] == 0  # other vpn
    m2 = mk(sharing=False)
    m2.fill(vpn=0x123, ppn=0x777, pageSize=0, pcid=1, ccid=2, own=1)
    assert rd(m2, 0x123, 1, 3)["hit"] == 1  # sharing off: pcid only
    assert rd(m2, 0x123, 2, 2)["hit"] == 0


def test_global_match_rule():
    for sharing in (True, False):
        m = mk(sharing=sharing)
        m.fill(vpn=0x40, ppn=0x99, pageSize=0, glob=1, pcid=1, ccid=1, own=0)
        for pcid, ccid in ((0, 0), (1, 1), (7, 9)):
            r = rd(m, 0x40, pcid, ccid, pcIdx=3, pcIdxValid=1)
            assert r["hit"] == 1 and r["shared"] == 0 and r["crossHit"] == 0 and r["ppn"] == 0x99


def test_shared_match_rule_and_pc_bits():
    m = mk()
    m.fill(vpn=0x50, ppn=0x5, pageSize=0, pcid=1, ccid=4, own=0, pc=0b0100)
    r = rd(m, 0x50, 1, 4)
    assert r["hit"] and r["shared"] and not r["crossHit"]
    r = rd(m, 0x50, 2, 4)
    assert r["hit"] and r["shared"] and r["crossHit"]
    assert rd(m, 0x50, 2, 4, pcIdx=0, pcIdxValid=1)["hit"] == 1  # bit 0 clear
    res = m.lookup(vpn=0x50, pcid=2, ccid=4, pcIdx=2, pcIdxValid=1)
    assert res.resp["hit"] == 0 and res.pc_reject  # bit 2 set: rejected
    assert rd(m, 0x50, 2, 4, pcIdx=2, pcIdxValid=0)["hit"] == 1  # pcIdx ignored when not valid
    assert rd(m, 0x50, 2, 5)["hit"] == 0  # other group
    # sharing off: the own = 0 fill is stored private
    m2 = mk(sharing=False)
    m2.fill(vpn=0x50, ppn=0x5, pageSize=0, pcid=1, ccid=4, own=0, pc=0b0100)
    assert rd(m2, 0x50, 2, 4)["hit"] == 0
    r = rd(m2, 0x50, 1, 9, pcIdx=2, pcIdxValid=1)
    assert r["hit"] == 1 and r["shared"] == 0


def test_bad_pcidx_formal():
    m = BabelFishModel(FORMAL)
    m.fill(vpn=0x10, ppn=0x1, pageSize=0, pcid=1, ccid=1, own=0, pc=0)
    assert rd(m, 0x10, 2, 1, pcIdx=2, pcIdxValid=1)["hit"] == 1
    res = m.lookup(vpn=0x10, pcid=2, ccid=1, pcIdx=3, pcIdxValid=1)
    assert res.resp["hit"] == 0 and res.bad_pcidx
    m.lookup(vpn=0x11, pcid=2, ccid=1, pcIdx=3, pcIdxValid=1)  # counted on a miss too
    m.lookup(vpn=0x11, pcid=2, ccid=1, pcIdx=3, pcIdxValid=0)  # not counted when not valid
    assert m.counters["badPcIdx"] == 2


def test_priority_private_global_shared():
    m = mk()
    v = 0x1230
    m.fill(vpn=v, ppn=0x3, pageSize=0, pcid=1, ccid=1, own=0)          # shared
    assert m.lookup(vpn=v, pcid=2, ccid=1).cls == SHARED
    m.fill(vpn=v, ppn=0x2, pageSize=0, glob=1)                          # global
    res = m.lookup(vpn=v, pcid=2, ccid=1)
    assert res.cls == GLOBAL and res.resp["ppn"] == 0x2 and res.matched_classes == {GLOBAL, SHARED}
    m.fill(vpn=v, ppn=0x1, pageSize=0, pcid=2, ccid=1, own=1)           # private
    res = m.lookup(vpn=v, pcid=2, ccid=1)
    assert res.cls == PRIVATE and res.resp["ppn"] == 0x1
    assert res.matched_classes == {PRIVATE, GLOBAL, SHARED}
    assert m.occupancy() == 3  # three different keys in one set


def test_priority_4k_over_superpage_and_lowest_sp_index():
    m = mk()
    m.fill(vpn=0x40000, ppn=0x80000, pageSize=2, pcid=1, ccid=1)   # 1G at sp way 0
    m.fill(vpn=0x40200, ppn=0x400, pageSize=1, pcid=1, ccid=1)     # 2M at sp way 1
    res = m.lookup(vpn=0x40201, pcid=1, ccid=1)
    assert res.array == "sp" and res.way == 0 and res.resp["pageSize"] == 2
    assert res.resp["ppn"] == 0x80000 + 0x201 and res.same_class_multi
    m.fill(vpn=0x40201, ppn=0x1234, pageSize=0, pcid=1, ccid=1)
    res = m.lookup(vpn=0x40201, pcid=1, ccid=1)
    assert res.array == "4k" and res.resp["ppn"] == 0x1234 and res.resp["pageSize"] == 0
    # a private superpage beats a shared 4K page (class before array)
    m.fill(vpn=0x40202, ppn=0x5555, pageSize=0, pcid=1, ccid=1, own=0)
    res = m.lookup(vpn=0x40202, pcid=1, ccid=1)
    assert res.array == "sp" and res.cls == PRIVATE


def test_superpage_offsets_and_bad_fills():
    m = mk()
    f = m.fill(vpn=0x1FF, ppn=0x200, pageSize=1, pcid=0, ccid=0)  # vpn low bits set: ignored
    assert f.installed and not f.bad and f.vpn_low_ignored
    assert rd(m, 0x0, 0, 0)["ppn"] == 0x200
    assert rd(m, 0x1FF, 0, 0)["ppn"] == 0x3FF
    f = m.fill(vpn=0x80000, ppn=0xC0001, pageSize=2, pcid=0, ccid=0)  # unaligned 1G ppn
    assert f.installed and f.bad
    assert rd(m, 0x80000 + 0x3FFFF, 0, 0)["ppn"] == 0xC0000 + 0x3FFFF
    f = m.fill(vpn=0x5, ppn=0x5, pageSize=3, pcid=0, ccid=0)
    assert not f.installed
    assert rd(m, 0x5, 0, 0)["ppn"] == 0x205  # still the 2M page
    assert m.counters["badFills"] == 2 and m.counters["fills"] == 3
    f = m.fill(vpn=0x7, ppn=0x1FF, pageSize=0, pcid=0, ccid=0)  # 4K: no alignment rule
    assert not f.bad


def test_keys_overwrite_not_evict():
    m = mk()
    m.fill(vpn=0x10, ppn=1, pageSize=0, pcid=1, ccid=1, own=1)
    f = m.fill(vpn=0x10, ppn=2, pageSize=0, pcid=1, ccid=2, own=1)  # private key: pcid only
    assert f.rule == "overwrite" and f.way == 0
    assert rd(m, 0x10, 1, 1)["hit"] == 0 and rd(m, 0x10, 1, 2)["ppn"] == 2
    f = m.fill(vpn=0x10, ppn=3, pageSize=0, pcid=5, ccid=2, own=0)  # shared key: ccid
    assert f.rule == "invalid" and f.way == 1
    f = m.fill(vpn=0x10, ppn=4, pageSize=0, pcid=6, ccid=2, own=0, pc=1)
    assert f.rule == "overwrite" and f.way == 1
    f = m.fill(vpn=0x10, ppn=5, pageSize=0, glob=1, pcid=1, ccid=1)
    assert f.rule == "invalid" and f.way == 2
    f = m.fill(vpn=0x10, ppn=6, pageSize=0, glob=1, pcid=7, ccid=7, own=0)
    assert f.rule == "overwrite" and f.way == 2
    f = m.fill(vpn=0x200, ppn=0x200, pageSize=1, pcid=1, ccid=1)
    f2 = m.fill(vpn=0x3FF, ppn=0x400, pageSize=1, pcid=1, ccid=1)  # same 2M page
    assert f.way == f2.way == 0 and f2.rule == "overwrite"
    f3 = m.fill(vpn=0x200, ppn=0x40000, pageSize=2, pcid=1, ccid=1)  # other size: other key
    assert f3.rule == "invalid" and f3.way == 1
    assert m.counters["evictions"] == 0


def test_plru_eviction_order_4way():
    m = mk()
    ways = [m.fill(vpn=(i << 4) | 3, ppn=i, pageSize=0, pcid=0, ccid=0).way for i in range(4)]
    assert ways == [0, 1, 2, 3]
    # fills touched 0,1,2,3 -> bits all 0 -> victim 0
    f = m.fill(vpn=(4 << 4) | 3, ppn=4, pageSize=0, pcid=0, ccid=0)
    assert f.rule == "evict" and f.way == 0 and f.evicted.ppn == 0
    # hit way 2 (vpn 0x23), then victim: touch 0 (fill) -> [1,1,0]; touch 2 -> [0,1,1] -> way 1
    assert rd(m, 0x23, 0, 0)["hit"]
    f = m.fill(vpn=(5 << 4) | 3, ppn=5, pageSize=0, pcid=0, ccid=0)
    assert f.way == 1 and f.evicted.vpn == 0x13
    assert m.counters["evictions"] == 2
    # a miss does not touch; a lookup hit on another set does not touch this one
    rd(m, 0x13, 0, 0)
    rd(m, 0x04, 0, 0)


def test_lru_and_random_eviction():
    m = mk(replacement="lru")
    for i in range(4):
        m.fill(vpn=i << 4, ppn=i, pageSize=0)
    rd(m, 0x00, 0, 0)  # order 1,2,3,0
    assert m.fill(vpn=4 << 4, ppn=4, pageSize=0).way == 1
    m = mk(replacement="random")
    for i in range(4):
        m.fill(vpn=i << 4, ppn=i, pageSize=0)
    assert m.fill(vpn=4 << 4, ppn=4, pageSize=0).way == 0        # s = 1
    assert m.set_repl[0].state == 0xB400
    assert m.fill(vpn=5 << 4, ppn=5, pageSize=0).way == 0        # low byte 0
    assert m.fill(vpn=5 << 4, ppn=6, pageSize=0).rule == "overwrite"
    assert m.set_repl[0].state == 0x5A00  # no advance on overwrite
    assert m.set_repl[1].state == 0x5A00  # one LFSR for the whole 4K array
    for i in range(4):
        m.fill(vpn=(i << 4) | 1, ppn=i, pageSize=0)   # fill set 1
    f = m.fill(vpn=(9 << 4) | 1, ppn=9, pageSize=0)
    assert f.way == 0 and m.set_repl[0].state == 0x2D00  # set 1's eviction moved the LFSR
    assert m.sp_repl.state == 1                           # the superpage array has its own


def test_superpage_array_eviction():
    m = mk()
    for i in range(8):
        assert m.fill(vpn=i << 9, ppn=i << 9, pageSize=1).way == i
    f = m.fill(vpn=8 << 9, ppn=0, pageSize=1)
    assert f.rule == "evict" and f.way == 0 and m.counters["evictions"] == 1


def _populate(m):
    m.fill(vpn=0x100, ppn=1, pageSize=0, pcid=1, ccid=1, own=1)   # private A
    m.fill(vpn=0x101, ppn=2, pageSize=0, pcid=2, ccid=1, own=1)   # private B, same group
    m.fill(vpn=0x100, ppn=3, pageSize=0, pcid=1, ccid=1, own=0)   # shared group 1
    m.fill(vpn=0x102, ppn=4, pageSize=0, pcid=3, ccid=2, own=0)   # shared group 2
    m.fill(vpn=0x100, ppn=5, pageSize=0, glob=1)                  # global
    m.fill(vpn=0x000, ppn=0x200, pageSize=1, pcid=1, ccid=1, own=1)  # private 2M covering 0x100


def _keys(m):
    return sorted((e.ppn, e.cls) for _, _, _, e in m.entries())


@pytest.mark.parametrize("sharing", [True, False])
def test_inval_kinds(sharing):
    def run(kind, **kw):
        m = mk(sharing=sharing)
        _populate(m)
        m.inval(kind=kind, **kw)
        return sorted(e.ppn for _, _, _, e in m.entries())

    # sharing off: the own=0 fill of (0x100, pcid 1) is stored private and overwrites ppn 1
    allp = [1, 2, 3, 4, 5, 0x200] if sharing else [2, 3, 4, 5, 0x200]
    assert run(0) == []
    assert run(6) == [] and run(7) == []
    assert run(1) == [5]
    if sharing:
        assert run(2, pcid=1) == [2, 3, 4, 5]            # shared entries stay
        assert run(4, pcid=1, vpn=0x100) == [2, 3, 4, 5]  # private 4K + private 2M covering it
        assert run(4, pcid=1, vpn=0x101) == [1, 2, 3, 4, 5]
    else:
        # sharing off: the own=0 fills were stored private, so kind 2 removes them by pcid
        assert run(2, pcid=1) == [2, 4, 5]
        assert run(4, pcid=1, vpn=0x100) == [2, 4, 5]
    assert run(3, ccid=1) == [4, 5]
    assert run(5, ccid=1, vpn=0x100) == [2, 4, 5]
    assert run(5, ccid=2, vpn=0x100) == allp
    assert run(4, pcid=9, vpn=0x100) == allp


def test_inval_counters_and_sharing_off_overwrite():
    m = mk(sharing=False)
    m.fill(vpn=0x10, ppn=1, pageSize=0, pcid=1, ccid=1, own=0)
    f = m.fill(vpn=0x10, ppn=2, pageSize=0, pcid=1, ccid=1, own=1)
    assert f.rule == "overwrite"  # both stored private: one key
    m.inval(kind=6)
    m.inval(kind=7)
    m.inval(kind=3, ccid=1)
    assert m.counters["invals"] == 3 and m.counters["badInvals"] == 2


def test_permfault():
    m = mk()
    m.fill(vpn=1, ppn=1, pageSize=0, perm_r=1, perm_w=1, perm_x=0, perm_u=0, dirty=0)
    assert rd(m, 1, 0, 0, cmd=0)["permFault"] == 0
    assert rd(m, 1, 0, 0, cmd=1)["permFault"] == 1          # clean
    assert rd(m, 1, 0, 0, cmd=2)["permFault"] == 1          # !x
    assert rd(m, 1, 0, 0, cmd=0, user=1)["permFault"] == 1  # !u
    assert rd(m, 1, 0, 0, cmd=3)["permFault"] == 1          # reserved
    m.fill(vpn=1, ppn=1, pageSize=0, perm_r=0, perm_w=1, perm_x=1, perm_u=1, dirty=1)
    assert rd(m, 1, 0, 0, cmd=0)["permFault"] == 1
    assert rd(m, 1, 0, 0, cmd=1, user=1)["permFault"] == 0
    assert rd(m, 1, 0, 0, cmd=2)["permFault"] == 0
    r = rd(m, 2, 0, 0, cmd=3)  # a miss never faults
    assert r["hit"] == 0 and r["permFault"] == 0
    c = m.counters
    assert c["permFaults"] == 5 and c["badCmds"] == 2 and c["hits"] == 8 and c["lookups"] == 9


def test_counters_saturate():
    m = mk()
    m.counters["lookups"] = (1 << 32) - 1
    m.lookup(vpn=0, pcid=0, ccid=0)
    assert m.counters["lookups"] == (1 << 32) - 1


def test_width_masking():
    m = BabelFishModel(FORMAL)
    m.fill(vpn=0x1FFFFF, ppn=0xFFFFFFF, pageSize=0, pcid=5, ccid=5)  # wider than the ports
    e = next(m.entries())[3]
    assert e.vpn == 0xFFFFF and e.ppn == 0x7FFFFFF and e.pcid == 1 and e.ccid == 1


# ----------------------------------------------------------------------------- VM isolation
# Doc "VM isolation" (vmidBits > 0): every match class, every key and every invalidation kind
# but 0 is scoped to one VMID; kind 6 removes one VMID's entries, kind 7 one page of one VMID
# whatever its owner; with vmidBits = 0 the vmid operand is ignored and 6 / 7 act as 0.
VM = dict(L1, vmidBits=4)


def test_vmid_param_range():
    assert BabelFishParams.from_dict(VM).vmid and not BabelFishParams.from_dict(L1).vmid
    for bad in (-1, 17):
        with pytest.raises(ValueError):
            BabelFishParams.from_dict({**L1, "vmidBits": bad})


@pytest.mark.parametrize("sharing", [True, False])
def test_vmid_every_class_needs_its_vm(sharing):
    m = mk(sharing=sharing, vmidBits=4)
    m.fill(vpn=0x40, ppn=0x10, pageSize=0, glob=1, vmid=0)                       # global, VM 0
    m.fill(vpn=0x41, ppn=0x11, pageSize=0, pcid=1, ccid=1, own=1, vmid=0)        # private
    m.fill(vpn=0x42, ppn=0x12, pageSize=0, pcid=1, ccid=1, own=0, vmid=0)        # shared
    m.fill(vpn=0x200, ppn=0x200, pageSize=1, glob=1, vmid=0)                      # global 2M
    for vpn, pcid in ((0x40, 1), (0x41, 1), (0x42, 1 if not sharing else 2), (0x205, 1)):
        assert rd(m, vpn, pcid, 1, vmid=0)["hit"] == 1
        assert rd(m, vpn, pcid, 1, vmid=1)["hit"] == 0        # same ids, another VM
        assert rd(m, vpn, pcid, 1, vmid=15)["hit"] == 0
    # the vmid is masked to vmidBits like every other field
    assert rd(m, 0x40, 0, 0, vmid=16)["hit"] == 1


def test_vmid_keys_are_per_vm():
    m = mk(vmidBits=4, ways=8)   # room for every key of set 0: no eviction
    f0 = m.fill(vpn=0x10, ppn=1, pageSize=0, glob=1, vmid=0)
    f1 = m.fill(vpn=0x10, ppn=2, pageSize=0, glob=1, vmid=1)
    assert (f0.rule, f1.rule, f0.way, f1.way) == ("invalid", "invalid", 0, 1)   # two entries
    f2 = m.fill(vpn=0x10, ppn=3, pageSize=0, glob=1, vmid=1)
    assert f2.rule == "overwrite" and f2.way == 1                                 # same VM: same key
    assert rd(m, 0x10, 0, 0, vmid=0)["ppn"] == 1 and rd(m, 0x10, 0, 0, vmid=1)["ppn"] == 3
    # private and shared keys too
    a = m.fill(vpn=0x20, ppn=4, pageSize=0, pcid=1, ccid=1, own=1, vmid=2)
    b = m.fill(vpn=0x20, ppn=5, pageSize=0, pcid=1, ccid=1, own=1, vmid=3)
    c = m.fill(vpn=0x20, ppn=6, pageSize=0, pcid=2, ccid=1, own=0, vmid=2)
    d = m.fill(vpn=0x20, ppn=7, pageSize=0, pcid=2, ccid=1, own=0, vmid=3)
    assert [x.rule for x in (a, b, c, d)] == ["invalid"] * 4
    assert rd(m, 0x20, 1, 1, vmid=3)["ppn"] == 5 and rd(m, 0x20, 3, 1, vmid=3)["ppn"] == 7


def test_vmid_sharing_only_inside_one_vm():
    m = mk(vmidBits=4)
    m.fill(vpn=0x30, ppn=0x9, pageSize=0, pcid=1, ccid=5, own=0, vmid=1)
    r = rd(m, 0x30, 2, 5, vmid=1)
    assert r["hit"] and r["shared"] and r["crossHit"]
    assert rd(m, 0x30, 2, 5, vmid=2)["hit"] == 0
    assert rd(m, 0x30, 1, 5, vmid=0)["hit"] == 0     # even the filler's own pcid


def _vm_population(m):
    """The same six entries (by _populate) in VM 1 and in VM 2; ppn + 0x1000 * vmid."""
    for vm in (1, 2):
        for f in (dict(vpn=0x100, ppn=1, pageSize=0, pcid=1, ccid=1, own=1),
                  dict(vpn=0x101, ppn=2, pageSize=0, pcid=2, ccid=1, own=1),
                  dict(vpn=0x100, ppn=3, pageSize=0, pcid=1, ccid=1, own=0),
                  dict(vpn=0x102, ppn=4, pageSize=0, pcid=3, ccid=2, own=0),
                  dict(vpn=0x100, ppn=5, pageSize=0, glob=1),
                  dict(vpn=0x000, ppn=0x200, pageSize=1, pcid=1, ccid=1, own=1)):
            m.fill(vmid=vm, **{**f, "ppn": f["ppn"] + 0x1000 * vm})


@pytest.mark.parametrize("kind,ops,removed", [
    (0, {}, [1, 2, 3, 4, 5, 0x200]),                 # kind 0: every VM
    (1, {}, [1, 2, 3, 4, 0x200]),
    (2, dict(pcid=1), [1, 0x200]),
    (3, dict(ccid=1), [1, 2, 3, 0x200]),
    (4, dict(pcid=1, vpn=0x100), [1, 0x200]),
    (5, dict(ccid=1, vpn=0x100), [1, 3, 0x200]),
    (6, {}, [1, 2, 3, 4, 5, 0x200]),                 # the whole VM
    (7, dict(vpn=0x100), [1, 3, 5, 0x200]),          # its page, global and shared included
    (7, dict(vpn=0x102), [4, 0x200]),
])
def test_vmid_inval_scoping(kind, ops, removed):
    m = mk(vmidBits=4, ways=8)   # set 0 holds 3 entries per VM: no eviction
    _vm_population(m)
    m.inval(kind=kind, vmid=1, **ops)
    left = sorted((e.vmid, e.ppn & 0xFFF) for _, _, _, e in m.entries())
    every = [1, 2, 3, 4, 5, 0x200]
    vm1 = [] if kind == 0 else sorted(set(every) - set(removed))
    vm2 = sorted(set(every) - set(removed)) if kind == 0 else every
    assert left == sorted([(1, x) for x in vm1] + [(2, x) for x in vm2])
    assert m.counters["badInvals"] == 0


def test_vmid_zero_bits_ignores_vmid():
    m = mk()   # vmidBits 0
    m.fill(vpn=0x10, ppn=1, pageSize=0, glob=1, vmid=3)
    assert rd(m, 0x10, 0, 0, vmid=5)["hit"] == 1
    assert m.fill(vpn=0x10, ppn=2, pageSize=0, glob=1, vmid=1).rule == "overwrite"
    m.fill(vpn=0x11, ppn=3, pageSize=0, pcid=1, ccid=1)
    m.inval(kind=7, vpn=0x99, vmid=2)          # reserved: everything goes
    assert m.occupancy() == 0 and m.counters["badInvals"] == 1


def test_vmid_sweep_kinds():
    """Doc "SRAM sweeps": with a VMID tag kinds 1 and 6 compare every entry's VMID and sweep
    like 2 and 3; kind 7 is a page kind (one set), kind 0 flash."""
    sram = dict(L1, storage="sram", latency=4)
    p0 = BabelFishParams.from_dict(sram)
    pv = BabelFishParams.from_dict({**sram, "vmidBits": 2})
    sh, sweep = p0.write_shadow, 15 + p0.write_shadow
    assert [p0.busy_after_inval(k) for k in range(8)] == [sh, sh, sweep, sweep, sh, sh, sh, sh]
    assert [pv.busy_after_inval(k) for k in range(8)] == [sh, sweep, sweep, sweep, sh, sh, sweep, sh]
    flops = BabelFishParams.from_dict({**L1, "vmidBits": 2})
    assert {flops.busy_after_inval(k) for k in range(8)} == {flops.write_shadow}
