"""Directed cocotb tests of BabelFishTlb, one (or more) per rule of docs/babelfish-tlb.md.

Every test states its expectations by hand (independently of the model) AND runs under the
scoreboard, which compares every response field and, at the end, every perf_* counter with the
reference model.  The tests run unchanged on every configuration; widths and sizes come from
the manifest, and expectations that depend on ``sharing`` say so.
"""

from __future__ import annotations

import cocotb

from models.babelfish import PAGE_LOW_BITS
from xlat_tb.cycle import TbError
from xlat_tb.seed import rng as seeded_rng

from .bf_env import BabelFishEnv


async def setup(dut, name: str, gaps=None) -> BabelFishEnv:
    env = BabelFishEnv(dut, rng=seeded_rng(name), name=name, gaps=gaps).start()
    await env.reset()
    return env


def expect(cond: bool, msg: str):
    if not cond:
        raise TbError(msg)


def vpn_in_set(env, s: int, tag: int) -> int:
    """A 4 KiB VPN of set ``s`` with tag ``tag`` (bits above the set index)."""
    return ((tag << env.p.setBits) | s) & env.model.vpn_mask


def pmax(env, field: str) -> int:
    return (1 << env.w[field]) - 1


async def expect_hit(env, what, ppn=None, *, page=None, shared=None, cross=None, fault=None, **req):
    r = await env.do_lookup(**req)
    expect(r["hit"] == 1, f"{what}: expected a hit, got miss for {req}")
    if ppn is not None:
        expect(r["ppn"] == ppn, f"{what}: ppn {r['ppn']:#x} != {ppn:#x}")
    if page is not None:
        expect(r["pageSize"] == page, f"{what}: pageSize {r['pageSize']} != {page}")
    if shared is not None:
        expect(r["shared"] == shared, f"{what}: shared {r['shared']} != {shared}")
    if cross is not None:
        expect(r["crossHit"] == cross, f"{what}: crossHit {r['crossHit']} != {cross}")
    if fault is not None:
        expect(r["permFault"] == fault, f"{what}: permFault {r['permFault']} != {fault}")
    return r


async def expect_miss(env, what, **req):
    r = await env.do_lookup(**req)
    expect(r["hit"] == 0, f"{what}: expected a miss, got a hit (ppn {r['ppn']:#x}) for {req}")
    expect(r["permFault"] == 0 and r["shared"] == 0 and r["crossHit"] == 0,
           f"{what}: a miss must have permFault/shared/crossHit 0: {r}")
    return r


# --------------------------------------------------------------------------- reset / basics
@cocotb.test()
async def test_reset_and_empty(dut):
    """After reset every counter is 0 and every lookup misses; readies idle high."""
    env = await setup(dut, "reset")
    for v in (0, 1, pmax(env, "lookup_req_bits_vpn")):
        await expect_miss(env, "empty TLB", vpn=v, pcid=1, ccid=1)
    await env.finish()


# --------------------------------------------------------------------------- match rule
@cocotb.test()
async def test_match_private(dut):
    env = await setup(dut, "match_private")
    sh = env.p.sharing
    v = vpn_in_set(env, 1, 2)
    top = 1 << (env.p.vpnBits - 1)
    await env.do_fill(vpn=v, ppn=0x1234, pcid=1, ccid=1, own=1, perm_x=0, perm_u=0)
    r = await expect_hit(env, "owner", 0x1234, page=0, shared=0, cross=0, vpn=v, pcid=1, ccid=1)
    expect((r["perm_r"], r["perm_w"], r["perm_x"], r["perm_u"], r["dirty"]) == (1, 1, 0, 0, 1),
           f"perm bits {r}")
    await expect_hit(env, "owner, pcIdx irrelevant", 0x1234, vpn=v, pcid=1, ccid=1, pcIdx=1,
                     pcIdxValid=1)
    await expect_miss(env, "other pcid", vpn=v, pcid=2, ccid=1)
    if sh:
        await expect_miss(env, "same pcid, other ccid (sharing on)", vpn=v, pcid=1, ccid=2)
    else:
        await expect_hit(env, "sharing off: pcid only", 0x1234, vpn=v, pcid=1, ccid=2)
    await expect_miss(env, "other vpn, same set", vpn=vpn_in_set(env, 1, 3), pcid=1, ccid=1)
    await expect_miss(env, "vpn top bit differs", vpn=v | top, pcid=1, ccid=1)
    # maximal ids
    pm, cm = pmax(env, "fill_bits_pcid"), pmax(env, "fill_bits_ccid")
    await env.do_fill(vpn=v | top, ppn=pmax(env, "fill_bits_ppn"), pcid=pm, ccid=cm)
    await expect_hit(env, "max ids / max ppn", pmax(env, "fill_bits_ppn"), vpn=v | top, pcid=pm,
                     ccid=cm)
    await expect_miss(env, "max vpn, pcid 0", vpn=v | top, pcid=0, ccid=cm)
    await env.finish()


@cocotb.test()
async def test_match_global(dut):
    env = await setup(dut, "match_global")
    v = vpn_in_set(env, 0, 5)
    await env.do_fill(vpn=v, ppn=0x77, glob=1, pcid=1, ccid=1, own=0)
    for pcid, ccid in ((0, 0), (1, 1), (2, 3), (pmax(env, "lookup_req_bits_pcid"),
                                              pmax(env, "lookup_req_bits_ccid"))):
        await expect_hit(env, f"global from ({pcid},{ccid})", 0x77, shared=0, cross=0, vpn=v,
                         pcid=pcid, ccid=ccid, pcIdx=0, pcIdxValid=1)
    # a global entry with own = 1 is still global
    v2 = vpn_in_set(env, 1, 5)
    await env.do_fill(vpn=v2, ppn=0x78, glob=1, pcid=1, ccid=1, own=1)
    await expect_hit(env, "global own=1", 0x78, shared=0, vpn=v2, pcid=3, ccid=2)
    await env.finish()


@cocotb.test()
async def test_match_shared_and_pc_bits(dut):
    env = await setup(dut, "match_shared")
    sh, pcb = env.p.sharing, env.p.pcBits
    top_bit = pcb - 1
    v = vpn_in_set(env, 1, 1)
    pc = (1 << 1) if pcb > 1 else 0
    await env.do_fill(vpn=v, ppn=0x50, pcid=1, ccid=1, own=0, pc=pc)
    if sh:
        await expect_hit(env, "filler, no PC", 0x50, shared=1, cross=0, vpn=v, pcid=1, ccid=1)
        await expect_hit(env, "group member: cross hit", 0x50, shared=1, cross=1, vpn=v, pcid=2,
                         ccid=1)
        await expect_hit(env, "pcIdx 0 clear", 0x50, shared=1, cross=1, vpn=v, pcid=2, ccid=1,
                         pcIdx=0, pcIdxValid=1)
        if pcb > 1:
            await expect_miss(env, "pcIdx 1 set: PC-bit rejection", vpn=v, pcid=2, ccid=1,
                              pcIdx=1, pcIdxValid=1)
            await expect_miss(env, "filler rejected by its own PC bit", vpn=v, pcid=1, ccid=1,
                              pcIdx=1, pcIdxValid=1)
            await expect_hit(env, "pcIdx 1 ignored when pcIdxValid=0", 0x50, vpn=v, pcid=2,
                             ccid=1, pcIdx=1, pcIdxValid=0)
        await expect_miss(env, "other group", vpn=v, pcid=2, ccid=2)
        await expect_hit(env, "top pcIdx clear", 0x50, vpn=v, pcid=3, ccid=1, pcIdx=top_bit,
                         pcIdxValid=1)
        # the top bit of the bitmask
        await env.do_fill(vpn=v, ppn=0x51, pcid=3, ccid=1, own=0, pc=1 << top_bit)  # same key
        await expect_miss(env, "top pcIdx set", vpn=v, pcid=2, ccid=1, pcIdx=top_bit,
                          pcIdxValid=1)
        await expect_hit(env, "refilled by pcid 3", 0x51, cross=1, vpn=v, pcid=1, ccid=1)
        await expect_hit(env, "refilled by pcid 3, own pcid", 0x51, cross=0, vpn=v, pcid=3,
                         ccid=1)
    else:
        await expect_hit(env, "sharing off: stored private", 0x50, shared=0, cross=0, vpn=v,
                         pcid=1, ccid=2, pcIdx=1, pcIdxValid=1)
        await expect_miss(env, "sharing off: other pcid", vpn=v, pcid=2, ccid=1)
    await env.finish()


@cocotb.test()
async def test_pc_rejection_then_private_copy(dut):
    """CoW: the group's shared page, one process's private copy (its PC bit set)."""
    env = await setup(dut, "pc_reject_private")
    if env.p.pcBits < 2:
        dut._log.info("pcBits < 2: using bit 0 only")
    b = min(1, env.p.pcBits - 1)
    v = vpn_in_set(env, 0, 3)
    await env.do_fill(vpn=v, ppn=0x100, pcid=1, ccid=1, own=0, pc=1 << b)
    await env.do_fill(vpn=v, ppn=0x200, pcid=2, ccid=1, own=1)
    await expect_hit(env, "private copy", 0x200, shared=0, vpn=v, pcid=2, ccid=1, pcIdx=b,
                     pcIdxValid=1)
    if env.p.sharing:
        ob = 0 if b == 1 else min(2, env.p.pcBits - 1)
        if ob != b:
            await expect_hit(env, "other member shares", 0x100, shared=1, cross=1, vpn=v, pcid=3,
                             ccid=1, pcIdx=ob, pcIdxValid=1)
        await expect_miss(env, "member with PC bit set but no copy", vpn=v, pcid=3, ccid=1,
                          pcIdx=b, pcIdxValid=1)
    else:
        await expect_miss(env, "sharing off: no hit for pcid 3", vpn=v, pcid=3, ccid=1)
        await expect_hit(env, "sharing off: pcid 1 own entry", 0x100, vpn=v, pcid=1, ccid=1)
    await env.finish()


# --------------------------------------------------------------------------- priority
@cocotb.test()
async def test_priority_private_global_shared(dut):
    env = await setup(dut, "priority_classes")
    sh = env.p.sharing
    v = vpn_in_set(env, 1, 6)
    if env.p.ways >= 3:   # all three classes in one 4K set
        await env.do_fill(vpn=v, ppn=0x3, pcid=1, ccid=1, own=0)  # shared (private to 1 if off)
        sppn = 0x3
    else:                 # 2-way sets: the shared entry is a 2M page covering v
        low = PAGE_LOW_BITS[1]
        await env.do_fill(vpn=v, ppn=0x3 << low, pageSize=1, pcid=1, ccid=1, own=0)
        sppn = (0x3 << low) | (v & ((1 << low) - 1))
    if sh:
        await expect_hit(env, "shared only", sppn, shared=1, vpn=v, pcid=2, ccid=1)
    else:
        await expect_miss(env, "sharing off", vpn=v, pcid=2, ccid=1)
    await env.do_fill(vpn=v, ppn=0x2, glob=1)
    await expect_hit(env, "global over shared", 0x2, shared=0, vpn=v, pcid=2, ccid=1)
    if not sh:
        await expect_hit(env, "sharing off: private over global", sppn, vpn=v, pcid=1, ccid=1)
    await env.do_fill(vpn=v, ppn=0x1, pcid=2, ccid=1, own=1)
    await expect_hit(env, "private over global and shared", 0x1, shared=0, vpn=v, pcid=2, ccid=1)
    await expect_hit(env, "another process gets global", 0x2, vpn=v, pcid=3, ccid=1)
    await expect_hit(env, "another group gets global", 0x2, vpn=v, pcid=3, ccid=2)
    await env.do_inval(kind=4, vpn=v, pcid=2)  # drop the private entry
    await expect_hit(env, "global again", 0x2, vpn=v, pcid=2, ccid=1)
    await env.do_inval(kind=1)  # drop every non-global entry
    await expect_hit(env, "only global left", 0x2, vpn=v, pcid=1, ccid=1)
    await env.do_inval(kind=0)
    # fill order reversed: private first, then shared
    await env.do_fill(vpn=v, ppn=0x11, pcid=2, ccid=1, own=1)
    await env.do_fill(vpn=v, ppn=0x33, pcid=3, ccid=1, own=0)
    await expect_hit(env, "private filled before shared", 0x11, vpn=v, pcid=2, ccid=1)
    if sh:
        await expect_hit(env, "shared for others", 0x33, shared=1, cross=1, vpn=v, pcid=0, ccid=1)
    await env.finish()


@cocotb.test()
async def test_priority_4k_over_superpage(dut):
    env = await setup(dut, "priority_arrays")
    sp = PAGE_LOW_BITS
    base2m = 3 << sp[1]            # a 2 MiB page
    v = base2m | vpn_in_set(env, 1, 0) | (5 << env.p.setBits) & ((1 << sp[1]) - 1)
    await env.do_fill(vpn=base2m, ppn=0x400, pageSize=1, pcid=1, ccid=1)
    await env.do_fill(vpn=v, ppn=0x9999, pageSize=0, pcid=1, ccid=1)
    await expect_hit(env, "4K over 2M", 0x9999, page=0, vpn=v, pcid=1, ccid=1)
    off = (v + 1) & ((1 << sp[1]) - 1)
    await expect_hit(env, "2M elsewhere", 0x400 | off, page=1, vpn=base2m | off, pcid=1, ccid=1)
    # class before array: a private 2M page beats a global (or shared) 4K page
    v2 = base2m | 0x21
    await env.do_fill(vpn=v2, ppn=0x8888, pageSize=0, glob=1)
    await expect_hit(env, "private 2M over global 4K", 0x400 | 0x21, page=1, vpn=v2, pcid=1,
                     ccid=1)
    await expect_hit(env, "global 4K for others", 0x8888, page=0, vpn=v2, pcid=2, ccid=2)
    # within the superpage array the lowest index wins (same class, 1G at way 0... after inval)
    await env.do_inval(kind=0)
    g = 1 << sp[2]                 # 1 GiB page #1
    await env.do_fill(vpn=g, ppn=1 << sp[2], pageSize=2, pcid=1, ccid=1)        # sp way 0
    await env.do_fill(vpn=g | (2 << sp[1]), ppn=0x600, pageSize=1, pcid=1, ccid=1)  # way 1
    await expect_hit(env, "1G at lower index wins", (1 << sp[2]) | (2 << sp[1]) | 7, page=2,
                     vpn=g | (2 << sp[1]) | 7, pcid=1, ccid=1)
    await env.do_inval(kind=0)
    await env.do_fill(vpn=g | (2 << sp[1]), ppn=0x600, pageSize=1, pcid=1, ccid=1)  # way 0
    await env.do_fill(vpn=g, ppn=1 << sp[2], pageSize=2, pcid=1, ccid=1)        # way 1
    await expect_hit(env, "2M at lower index wins", 0x600 | 7, page=1,
                     vpn=g | (2 << sp[1]) | 7, pcid=1, ccid=1)
    await expect_hit(env, "1G outside the 2M", (1 << sp[2]) | (3 << sp[1]), page=2,
                     vpn=g | (3 << sp[1]), pcid=1, ccid=1)
    await env.finish()


# --------------------------------------------------------------------------- keys / refill
@cocotb.test()
async def test_refill_same_key_overwrites(dut):
    env = await setup(dut, "refill")
    s, W = 1 % env.p.sets, env.p.ways
    keys = [vpn_in_set(env, s, t) for t in range(W)]
    for i, k in enumerate(keys):
        f = await env.do_fill(vpn=k, ppn=0x100 + i, pcid=1, ccid=1)
        expect(f.rule == "invalid" and f.way == i, f"fill {i} went to way {f.way} ({f.rule})")
    # set full: refill key 0 with a new ppn -> overwrite, no eviction
    await env.do_fill(vpn=keys[0], ppn=0x500, pcid=1, ccid=1, perm_w=0)
    for i, k in enumerate(keys):
        r = await expect_hit(env, f"key {i}", 0x500 if i == 0 else 0x100 + i, vpn=k, pcid=1,
                             ccid=1)
    r = await env.do_lookup(vpn=keys[0], pcid=1, ccid=1, cmd=1)
    expect(r["permFault"] == 1 and r["perm_w"] == 0, "refill replaced the permissions")
    # private key is (vpn, size, pcid): another ccid of the same pcid overwrites (literal doc)
    await env.do_fill(vpn=keys[1], ppn=0x600, pcid=1, ccid=2)
    await expect_hit(env, "private refill from ccid 2", 0x600, vpn=keys[1], pcid=1, ccid=2)
    if env.p.sharing:
        await expect_miss(env, "ccid 1 copy was overwritten", vpn=keys[1], pcid=1, ccid=1)
    # superpage: different low VPN bits, same 2M page -> same key
    b = 5 << PAGE_LOW_BITS[1]
    await env.do_fill(vpn=b | 3, ppn=0x200, pageSize=1, pcid=1, ccid=1)
    await env.do_fill(vpn=b | 0x1F0, ppn=0x400, pageSize=1, pcid=1, ccid=1)
    await expect_hit(env, "2M refill", 0x400 | 9, page=1, vpn=b | 9, pcid=1, ccid=1)
    counters = await env.check_counters()
    expect(counters["evictions"] == 0, f"refills counted as evictions: {counters['evictions']}")
    expect(env.model.occupancy() == W + 1, f"model occupancy {env.model.occupancy()}")
    await env.finish()


# --------------------------------------------------------------------------- superpages
@cocotb.test()
async def test_superpages(dut):
    env = await setup(dut, "superpages")
    l2, l1g = PAGE_LOW_BITS[1], PAGE_LOW_BITS[2]
    vb = env.p.vpnBits
    s2 = (1 << l2) * 7                     # 2 MiB page 7
    p2 = 0x12 << l2
    await env.do_fill(vpn=s2 | 0x1AB, ppn=p2, pageSize=1, pcid=1, ccid=1, perm_x=0)  # low VPN bits ignored
    for off in (0, 1, 0x1AB, (1 << l2) - 1):
        await expect_hit(env, f"2M +{off:#x}", p2 | off, page=1, vpn=s2 | off, pcid=1, ccid=1)
    await expect_miss(env, "just past the 2M page", vpn=s2 + (1 << l2), pcid=1, ccid=1)
    await expect_miss(env, "just before the 2M page", vpn=s2 - 1, pcid=1, ccid=1)
    s1 = ((1 << (vb - l1g)) - 1) << l1g    # the last 1 GiB page of the VPN space
    p1 = ((1 << (env.p.ppnBits - l1g)) - 1) << l1g
    await env.do_fill(vpn=s1, ppn=p1, pageSize=2, pcid=1, ccid=1)
    for off in (0, 0x155, (1 << l2) + 3, (1 << l1g) - 1):
        await expect_hit(env, f"1G +{off:#x}", p1 | off, page=2, vpn=s1 | off, pcid=1, ccid=1)
    await expect_miss(env, "below the 1G page", vpn=s1 - 1, pcid=1, ccid=1)
    # unaligned superpage PPN: installed, low bits ignored, badFills counted
    s3 = (1 << l2) * 9
    await env.do_fill(vpn=s3, ppn=(0x30 << l2) | 0x1FF, pageSize=1, pcid=2, ccid=2)
    await expect_hit(env, "unaligned 2M ppn", (0x30 << l2) | 4, page=1, vpn=s3 | 4, pcid=2, ccid=2)
    s4 = 2 << l1g
    await env.do_fill(vpn=s4 | 0x3, ppn=(5 << l1g) | (1 << (l1g - 1)), pageSize=2, pcid=2, ccid=2)
    await expect_hit(env, "unaligned 1G ppn", (5 << l1g) | 0x10, page=2, vpn=s4 | 0x10, pcid=2,
                     ccid=2)
    c = await env.check_counters()
    expect(c["badFills"] == 2, f"badFills {c['badFills']} != 2")
    await env.finish()


# --------------------------------------------------------------------------- permissions
@cocotb.test()
async def test_perm_fault(dut):
    env = await setup(dut, "perm_fault")
    v = vpn_in_set(env, 0, 9)
    n = 0
    for perms in range(32):
        r, w, x, u, d = [(perms >> i) & 1 for i in range(5)]
        await env.do_fill(vpn=v, ppn=0x40 + perms, pcid=1, ccid=1, perm_r=r, perm_w=w, perm_x=x,
                          perm_u=u, dirty=d)
        for cmd in range(4):
            for user in (0, 1):
                want = ((cmd == 0 and not r) or (cmd == 1 and (not w or not d))
                        or (cmd == 2 and not x) or (user and not u) or cmd == 3)
                n += int(want)
                res = await env.do_lookup(vpn=v, pcid=1, ccid=1, cmd=cmd, user=user)
                expect(res["hit"] == 1 and res["permFault"] == int(want),
                       f"perms r{r} w{w} x{x} u{u} d{d} cmd{cmd} user{user}: permFault "
                       f"{res['permFault']} != {int(want)}")
                expect((res["perm_r"], res["perm_w"], res["perm_x"], res["perm_u"],
                        res["dirty"]) == (r, w, x, u, d), f"perm fields {res}")
    # a miss never faults, whatever cmd and user
    for cmd in range(4):
        await expect_miss(env, f"miss cmd {cmd}", vpn=v + 1, pcid=1, ccid=1, cmd=cmd, user=1)
    c = await env.check_counters()
    expect(c["permFaults"] == n, f"perf_permFaults {c['permFaults']} != {n}")
    # cmd 3 is counted per accepted lookup: 2 per permission combination + the miss
    expect(c["badCmds"] == 32 * 2 + 1, f"perf_badCmds {c['badCmds']} != {32 * 2 + 1}")
    await env.finish()


# --------------------------------------------------------------------------- invalidation
def _inval_population(env):
    """Six entries that fit every configuration (>= 2 sets x 2 ways + 2 superpage entries)."""
    l2, l1g = PAGE_LOW_BITS[1], PAGE_LOW_BITS[2]
    V1, V2, V3 = vpn_in_set(env, 0, 1), vpn_in_set(env, 1, 1), vpn_in_set(env, 1, 2)
    S1, S2 = 2 << l2, 1 << l1g
    fills = {
        "A": dict(vpn=V1, ppn=0xA, pcid=1, ccid=1, own=1),
        "B": dict(vpn=V1, ppn=0xB, pcid=2, ccid=1, own=1),
        "C": dict(vpn=V2, ppn=0xC, pcid=1, ccid=1, own=0),
        "D": dict(vpn=V3, ppn=0xD, glob=1, pcid=3, ccid=3),
        "E": dict(vpn=S1, ppn=0xE << l2, pageSize=1, pcid=1, ccid=2, own=1),
        "F": dict(vpn=S2, ppn=0xF << l1g, pageSize=2, pcid=3, ccid=2, own=0),
    }
    probes = {  # a lookup that hits exactly this entry while it is present
        "A": dict(vpn=V1, pcid=1, ccid=1), "B": dict(vpn=V1, pcid=2, ccid=1),
        "C": dict(vpn=V2, pcid=1, ccid=1), "D": dict(vpn=V3, pcid=0, ccid=0),
        "E": dict(vpn=S1 | 5, pcid=1, ccid=2), "F": dict(vpn=S2 | 0x777, pcid=3, ccid=2),
    }
    return fills, probes, dict(V1=V1, S1=S1, S2=S2)


@cocotb.test()
async def test_inval_every_kind(dut):
    env = await setup(dut, "inval_kinds")
    fills, probes, at = _inval_population(env)
    sh, vm = env.p.sharing, env.p.vmid
    allk = set(fills)
    # (kind, operands, removed with sharing on, removed with sharing off)
    cases = [
        (0, {}, allk, allk),
        (1, {}, allk - {"D"}, allk - {"D"}),
        (2, dict(pcid=1), {"A", "E"}, {"A", "C", "E"}),
        (2, dict(pcid=3), set(), {"F"}),
        (3, dict(ccid=1), {"A", "B", "C"}, {"A", "B", "C"}),
        (3, dict(ccid=2), {"E", "F"}, {"E", "F"}),
        (3, dict(ccid=3), set(), set()),                       # global D keeps its ccid 3
        (4, dict(pcid=1, vpn=at["V1"]), {"A"}, {"A"}),
        (4, dict(pcid=1, vpn=at["S1"] | 0x1FF), {"E"}, {"E"}),  # covers: 2M page of E
        (4, dict(pcid=3, vpn=at["S2"] | 5), set(), {"F"}),      # F shared: kind 4 spares it
        (5, dict(ccid=1, vpn=at["V1"]), {"A", "B"}, {"A", "B"}),
        (5, dict(ccid=2, vpn=at["S2"] | 0x3FFFF), {"F"}, {"F"}),
        (5, dict(ccid=2, vpn=at["S1"]), {"E"}, {"E"}),
        # vmidBits 0: 6 and 7 are reserved and act as 0; with a VMID tag (every entry here in
        # VM 0, the inval's vmid 0) 6 removes VM 0 (all) and 7 VM 0's entries covering vpn
        (6, dict(pcid=1, ccid=1, vpn=at["V1"]), allk, allk),
        (7, dict(vpn=at["V1"]), {"A", "B"} if vm else allk, {"A", "B"} if vm else allk),
    ]
    for kind, ops, rm_on, rm_off in cases:
        await env.do_inval(kind=0)
        for name, f in fills.items():
            fl = await env.do_fill(**f)
            expect(fl.rule == "invalid", f"population entry {name} replaced something ({fl.rule})")
        for name, q in probes.items():
            await expect_hit(env, f"before kind {kind}: {name}", vpn=q["vpn"], pcid=q["pcid"],
                             ccid=q["ccid"])
        await env.do_inval(kind=kind, **ops)
        removed = rm_on if sh else rm_off
        for name, q in probes.items():
            what = f"after inval kind {kind} {ops}: entry {name}"
            if name in removed:
                await expect_miss(env, what + " must be gone", **q)
            else:
                await expect_hit(env, what + " must stay", **q)
    c = await env.check_counters()
    want = 0 if vm else 2
    expect(c["badInvals"] == want, f"perf_badInvals {c['badInvals']} != {want}")
    await env.finish()


@cocotb.test()
async def test_inval_sharing_difference(dut):
    """The same stimulus gives a conventional PCID-tagged TLB with sharing off."""
    env = await setup(dut, "sharing_difference")
    v = vpn_in_set(env, 1, 4)
    await env.do_fill(vpn=v, ppn=0x10, pcid=1, ccid=1, own=0)
    r = await env.do_lookup(vpn=v, pcid=2, ccid=1)
    expect(r["hit"] == int(env.p.sharing), f"cross-process hit iff sharing: {r}")
    await env.do_fill(vpn=v, ppn=0x20, pcid=1, ccid=1, own=1)
    r = await env.do_lookup(vpn=v, pcid=2, ccid=1)
    expect(r["hit"] == int(env.p.sharing) and (not r["hit"] or r["ppn"] == 0x10), f"{r}")
    # sharing on: two entries (shared + private); off: the second fill overwrote the first
    expect(env.model.occupancy() == (2 if env.p.sharing else 1), "occupancy")
    await env.do_inval(kind=2, pcid=1)
    r = await env.do_lookup(vpn=v, pcid=1, ccid=1)
    expect(r["hit"] == int(env.p.sharing), f"kind 2 keeps the group's shared entry: {r}")
    await env.finish()


# --------------------------------------------------------------------------- bad input
@cocotb.test()
async def test_bad_inputs(dut):
    env = await setup(dut, "bad_inputs")
    p = env.p
    v = vpn_in_set(env, 1, 7)
    # pageSize 3: not installed, counted
    await env.do_fill(vpn=v, ppn=0x33, pageSize=3, pcid=1, ccid=1)
    await expect_miss(env, "pageSize 3 not installed", vpn=v, pcid=1, ccid=1)
    await expect_miss(env, "pageSize 3 not installed (superpage?)", vpn=v & ~0x1FF, pcid=1, ccid=1)
    # cmd 3: a hit faults, a miss does not
    await env.do_fill(vpn=v, ppn=0x34, pcid=1, ccid=1)
    await expect_hit(env, "cmd 3 faults", 0x34, fault=1, vpn=v, pcid=1, ccid=1, cmd=3)
    await expect_miss(env, "cmd 3 miss", vpn=v + 1, pcid=1, ccid=1, cmd=3)
    # reserved inval kinds (vmidBits 0): everything goes, global included. With a VMID tag
    # they are defined (test_vmid_*): 6 removes VM 0 (every entry here), 7 VM 0's page v
    for kind in (6, 7):
        await env.do_fill(vpn=v, ppn=0x35, glob=1)
        await env.do_inval(kind=kind, vpn=v if p.vmid else v + 1, pcid=2, ccid=2)
        await expect_miss(env, f"inval kind {kind} = all", vpn=v, pcid=0, ccid=0)
        await expect_miss(env, f"inval kind {kind}: the private entry too", vpn=v, pcid=1, ccid=1)
    # pcIdx out of range (only possible when pcBits is not a power of 2)
    if (1 << p.pcIdxBits) > p.pcBits:
        await env.do_fill(vpn=v, ppn=0x36, pcid=1, ccid=1, own=0, pc=0)
        bad = p.pcBits
        if p.sharing:
            await expect_hit(env, "in-range pcIdx, bit clear", 0x36, vpn=v, pcid=2, ccid=1,
                             pcIdx=bad - 1, pcIdxValid=1)
            await expect_miss(env, "pcIdx >= pcBits: treated as bit set", vpn=v, pcid=2, ccid=1,
                              pcIdx=bad, pcIdxValid=1)
            await expect_miss(env, "pcIdx max", vpn=v, pcid=2, ccid=1,
                              pcIdx=(1 << p.pcIdxBits) - 1, pcIdxValid=1)
        else:
            await expect_hit(env, "sharing off: private entry, pcIdx irrelevant", 0x36, vpn=v,
                             pcid=1, ccid=1, pcIdx=bad, pcIdxValid=1)
        await expect_hit(env, "out-of-range pcIdx ignored when not valid", 0x36, vpn=v,
                         pcid=1, ccid=1, pcIdx=bad, pcIdxValid=0)
        # private and global entries are unaffected by a bad pcIdx
        await env.do_fill(vpn=v + 2, ppn=0x37, pcid=2, ccid=1)
        await expect_hit(env, "private with bad pcIdx", 0x37, vpn=v + 2, pcid=2, ccid=1,
                         pcIdx=bad, pcIdxValid=1)
        c = await env.check_counters()
        want = 3 if p.sharing else 2  # counted per lookup with pcIdxValid and pcIdx >= pcBits
        expect(c["badPcIdx"] == want, f"perf_badPcIdx {c['badPcIdx']} != {want}")
    else:
        dut._log.info("pcIdx out-of-range case skipped: pcBits=%d fills every %d-bit pcIdx, "
                      "so no pcIdx can be out of range in %s (covered by babelfish_formal*)",
                      p.pcBits, p.pcIdxBits, env.config)
    c = await env.check_counters()
    expect(c["badFills"] == 1 and c["badCmds"] == 2 and c["badInvals"] == (0 if p.vmid else 2),
           f"bad-input counters {c}")
    await env.finish()


# --------------------------------------------------------------------------- evictions
@cocotb.test()
async def test_evictions_follow_policy(dut):
    """Fill one 4K set and the superpage array beyond capacity, interleaving hits, and check
    each victim (the model replays the exact policy; probes prove which entry left)."""
    env = await setup(dut, "evictions")
    rng = env.rng
    W, S = env.p.ways, env.p.superpageEntries
    s = env.p.sets - 1
    keys = [vpn_in_set(env, s, t) for t in range(3 * W + 2)]
    live = []
    n_evict = 0
    for i, k in enumerate(keys):
        f = await env.do_fill(vpn=k, ppn=0x1000 + i, pcid=1, ccid=1)
        if f.rule == "evict":
            n_evict += 1
            live.remove(f.evicted.vpn)
        live.append(k)
        # touch a few live entries in random order (hits move the replacement state)
        for kk in rng.sample(live, min(len(live), rng.randrange(0, 3))):
            await expect_hit(env, "live 4K entry", vpn=kk, pcid=1, ccid=1)
        gone = [kk for kk in keys[:i + 1] if kk not in live]
        if gone:
            await expect_miss(env, "evicted 4K entry", vpn=rng.choice(gone), pcid=1, ccid=1)
    expect(n_evict == len(keys) - W, f"4K evictions {n_evict} != {len(keys) - W}")
    l2 = PAGE_LOW_BITS[1]
    sp_keys = [(j + 1) << l2 for j in range(2 * S + 3)]
    live = []
    for i, k in enumerate(sp_keys):
        f = await env.do_fill(vpn=k, ppn=(0x40 + i) << l2, pageSize=1, pcid=1, ccid=1)
        if f.rule == "evict":
            n_evict += 1
            live.remove(f.evicted.vpn)
        live.append(k)
        for kk in rng.sample(live, min(len(live), rng.randrange(0, 3))):
            await expect_hit(env, "live 2M entry", page=1, vpn=kk | 1, pcid=1, ccid=1)
    for k in sp_keys:
        r = await env.do_lookup(vpn=k | 2, pcid=1, ccid=1)
        expect(r["hit"] == int(k in live), f"2M page {k:#x}: hit {r['hit']}, live {k in live}")
    c = await env.check_counters()
    expect(c["evictions"] == n_evict, f"perf_evictions {c['evictions']} != {n_evict}")
    await env.finish()


@cocotb.test()
async def test_eviction_stress_one_set(dut):
    """Random fills/hits/invals confined to one 4K set and the superpage array."""
    env = await setup(dut, "eviction_stress")
    rng = env.rng
    W = env.p.ways
    tags = list(range(W * 2 + 1))
    for _ in range(400):
        t = rng.choice(tags)
        v = vpn_in_set(env, 0, t)
        op = rng.random()
        if op < 0.35:
            await env.do_fill(vpn=v, ppn=rng.randrange(1 << 12), pcid=rng.choice((1, 2)),
                              ccid=1, own=rng.choice((0, 1)))
        elif op < 0.45:
            ps = rng.choice((1, 2))
            await env.do_fill(vpn=(t << PAGE_LOW_BITS[ps]) & env.model.vpn_mask,
                              ppn=rng.randrange(4) << PAGE_LOW_BITS[2], pageSize=ps,
                              pcid=rng.choice((1, 2)), ccid=1, own=rng.choice((0, 1)))
        elif op < 0.48:
            await env.do_inval(kind=rng.choice((4, 5)), vpn=v, pcid=rng.choice((1, 2)), ccid=1)
        else:
            await env.do_lookup(vpn=v if rng.random() < 0.8 else (t << PAGE_LOW_BITS[1]) | 3,
                                pcid=rng.choice((1, 2)), ccid=1,
                                pcIdx=rng.randrange(min(4, env.p.pcBits)),
                                pcIdxValid=rng.choice((0, 1)))
    await env.finish()


# --------------------------------------------------------------------------- timing / order
@cocotb.test()
async def test_timing_and_ordering(dut):
    """One operation per cycle with priority inval > fill > lookup; each operation sees all
    earlier ones; lookups answered exactly `latency` cycles later; readies as documented
    (the environment checks these every cycle)."""
    env = await setup(dut, "timing")
    v = vpn_in_set(env, 1, 1)
    # all three presented in the same cycle: inval first, then fill, then the lookup sees the fill
    env.send_lookup(vpn=v, pcid=1, ccid=1)
    env.send_fill(vpn=v, ppn=0x42, pcid=1, ccid=1)
    env.send_inval(kind=0)
    await env.drain()
    order = [(env.inval.count, env.fill.count, env.lookup.count)]
    expect(order == [(1, 1, 1)], f"counts {order}")
    hist = [h.split()[1] for h in list(env.history)[-3:]]
    expect(hist == ["inval", "fill", "lookup"], f"acceptance order {hist}")
    r = await expect_hit(env, "fill visible", 0x42, vpn=v, pcid=1, ccid=1)
    # a fill and the lookup right behind it (accepted when the fill has landed: t + latency)
    v2 = vpn_in_set(env, 0, 2)
    env.send_fill(vpn=v2, ppn=0x43, pcid=1, ccid=1)
    t_l = env.send_lookup(vpn=v2, pcid=1, ccid=1)
    await env.drain()
    expect(t_l["_resp"]["hit"] == 1, "lookup right after a fill must see it")
    # an inval followed immediately by a lookup of the removed page
    env.send_inval(kind=4, vpn=v2, pcid=1)
    t_l = env.send_lookup(vpn=v2, pcid=1, ccid=1)
    await env.drain()
    expect(t_l["_resp"]["hit"] == 0, "lookup right after an inval must miss")
    # a stream of back-to-back lookups: one per cycle
    txns = [env.send_lookup(vpn=v if i % 2 else v2, pcid=1, ccid=1) for i in range(40)]
    await env.drain()
    cycles = [t["_cycle"] for t in txns]
    expect(cycles == list(range(cycles[0], cycles[0] + 40)),
           f"back-to-back lookups not accepted one per cycle: {cycles[:10]}...")
    # every inval kind followed by lookups: busy periods are checked cycle by cycle
    for kind in range(8):
        env.send_fill(vpn=v, ppn=0x44, pcid=1, ccid=1)
        env.send_inval(kind=kind, vpn=v, pcid=1, ccid=1)
        for _ in range(3):
            env.send_lookup(vpn=v, pcid=1, ccid=1)
        await env.drain()
    await env.finish()


@cocotb.test()
async def test_busy_cycles_per_operation(dut):
    """For the fill and every inval kind: present the operation together with a lookup and
    measure when the lookup is accepted.  Doc ("Timing"): nothing is accepted in the write
    shadow, latency - 1 cycles after a write (latency 4: 4 cycles, the commit; sram 5: 5; sram 6:
    5, the operation registered before the read), so the lookup is accepted at t + shadow + 1; sram with more than one set: kinds 2/3 sweep every set, one a
    cycle, and the lookup is accepted at t + sets + shadow; with a VMID tag kinds 1 and 6 sweep
    too (doc "SRAM sweeps": they compare every entry's VMID)."""
    env = await setup(dut, "busy_cycles")
    v = vpn_in_set(env, 1, 1)
    sets, lat = env.p.sets, env.p.latency
    shadow = ({2: 1, 3: 2, 4: 4, 5: 5, 6: 5} if env.sram else {1: 0, 2: 1, 3: 2, 4: 4})[lat]
    after = shadow + 1
    sweep = sets + shadow if env.sram and sets > 1 else after
    doc = {"fill": after, 0: after, 1: after, 2: sweep, 3: sweep, 4: after, 5: after, 6: after, 7: after}
    if env.p.vmid:
        doc.update({1: sweep, 6: sweep})
    table, bad = [], []
    for op in ["fill"] + list(range(8)):
        await env.drain()
        if op == "fill":
            t = env.send_fill(vpn=v, ppn=0x45, pcid=1, ccid=1)
        else:
            t = env.send_inval(kind=op, vpn=v, pcid=1, ccid=1)
        lk = env.send_lookup(vpn=v, pcid=1, ccid=1)
        await env.drain()
        gap = lk["_cycle"] - t["_cycle"]
        table.append(f"{'fill' if op == 'fill' else f'inval kind {op}'}: lookup accepted at "
                     f"t+{gap} (doc t+{doc[op]})")
        if gap != doc[op]:
            bad.append(table[-1])
    dut._log.info("busy cycles (%s, latency %d):\n  %s", env.p.storage, lat, "\n  ".join(table))
    # deviations are reported (and, unless XLAT_TIMING=warn, fail) by finish(); say which
    if bad:
        dut._log.warning("operation timing differs from the doc:\n  %s", "\n  ".join(bad))
    await env.finish()


@cocotb.test()
async def test_random_gaps_short(dut):
    """A short mixed run under heavy random valid gaps (the scoreboard checks everything)."""
    from xlat_tb.backpressure import random_pattern

    rng = seeded_rng("gaps_short")
    gaps = {k: random_pattern(rng, "heavy") for k in ("inval", "fill", "lookup")}
    env = await setup(dut, "gaps_short", gaps=gaps)
    for i in range(300):
        t = rng.randrange(4)
        v = vpn_in_set(env, rng.randrange(2), t)
        x = rng.random()
        if x < 0.25:
            env.send_fill(vpn=v, ppn=rng.randrange(1 << 10), pcid=rng.randrange(2), ccid=1,
                          own=rng.randrange(2), glob=int(rng.random() < 0.1))
        elif x < 0.3:
            env.send_inval(kind=rng.randrange(8), vpn=v, pcid=rng.randrange(2), ccid=1)
        else:
            env.send_lookup(vpn=v, pcid=rng.randrange(2), ccid=1, cmd=rng.randrange(4),
                            user=rng.randrange(2))
    await env.finish()


# --------------------------------------------------------------------------- VM isolation
# Doc "VM isolation" (vmidBits > 0; test_babelfish.py runs these on the vmid configurations
# only): every match class, every key and every invalidation kind but 0 is scoped to one VMID.
def _vm_entries(env):
    """Per VM: a private 4 KiB entry (set 0), a global 4 KiB entry (set 1) and a shared 2 MiB
    entry: two VMs' copies fit every configuration (2 ways per set, 2 superpage entries).
    Returns {name: (fill without vmid and ppn, probe lookup)}; ppn is given per VM."""
    l2 = PAGE_LOW_BITS[1]
    vp, vg, s = vpn_in_set(env, 0, 1), vpn_in_set(env, 1, 2), 2 << l2
    return {
        "P": (dict(vpn=vp, pcid=1, ccid=1, own=1), dict(vpn=vp, pcid=1, ccid=1)),
        "G": (dict(vpn=vg, glob=1, pcid=2, ccid=2), dict(vpn=vg, pcid=3, ccid=3)),
        "S": (dict(vpn=s, pageSize=1, pcid=3, ccid=1, own=0), dict(vpn=s | 5, pcid=2, ccid=1)),
    }


def _vm_ppn(name: str, vm_index: int) -> int:
    """A distinct PPN per entry and VM (2 MiB aligned for the superpage)."""
    n = 0x10 + 4 * vm_index + "PGS".index(name)
    return n << PAGE_LOW_BITS[1] if name == "S" else n


async def _vm_fill_all(env, vms):
    for i, vm in enumerate(vms):
        for name, (f, _) in _vm_entries(env).items():
            r = await env.do_fill(vmid=vm, ppn=_vm_ppn(name, i), **f)
            expect(r.rule == "invalid", f"{name} of VM {vm}: {r.rule} way {r.way}, expected a free way")


async def _vm_probe(env, vms, present: set, what: str):
    """Each entry of each VM answers its probe from its own VM iff (name, vm) is in present."""
    for i, vm in enumerate(vms):
        for name, (f, q) in _vm_entries(env).items():
            if (name, vm) in present:
                want = _vm_ppn(name, i) | (q["vpn"] & 0x1FF if name == "S" else 0)
                await expect_hit(env, f"{what}: {name} of VM {vm}", want, vmid=vm, **q)
            else:
                await expect_miss(env, f"{what}: {name} of VM {vm} must be gone", vmid=vm, **q)


@cocotb.test()
async def test_vmid_isolation(dut):
    """No entry of one VM answers another VM: a global entry of VM a misses in VM b, a private
    entry with the same pcid/ccid/vpn misses in VM b, a shared entry with the same ccid misses
    in VM b; then VM b's own copies (same keys) are separate entries."""
    env = await setup(dut, "vmid_isolation")
    vmax = pmax(env, "fill_bits_vmid")
    for a, b in ((vmax, 0), (0, 1)):
        await env.do_inval(kind=0)
        await _vm_fill_all(env, [a])
        await _vm_probe(env, [a], {("P", a), ("G", a), ("S", a)}, "VM a alone")
        for name, (_, q) in _vm_entries(env).items():
            await expect_miss(env, f"{name} of VM {a} from VM {b}", vmid=b, **q)
        # the shared entry does not serve its own filler's pcid in another VM either
        await expect_miss(env, "shared entry, filler's pcid, other VM", vmid=b,
                          vpn=_vm_entries(env)["S"][1]["vpn"], pcid=3, ccid=1)
        # VM b's fills of the same keys: new entries (a free way each), both VMs answer their own
        for name, (f, _) in _vm_entries(env).items():
            r = await env.do_fill(vmid=b, ppn=_vm_ppn(name, 1), **f)
            expect(r.rule == "invalid", f"same key in VM {b}: {r.rule}, expected a second entry")
        await _vm_probe(env, [a, b], {(n, v) for n in "PGS" for v in (a, b)}, "two VMs")
        # a refill in VM b overwrites VM b's entry only
        f = _vm_entries(env)["G"][0]
        r = await env.do_fill(vmid=b, ppn=0x77, **f)
        expect(r.rule == "overwrite", f"refill of G in VM {b}: {r.rule}")
        await expect_hit(env, "refilled G of VM b", 0x77, vmid=b, **_vm_entries(env)["G"][1])
        await expect_hit(env, "G of VM a untouched", _vm_ppn("G", 0), vmid=a,
                         **_vm_entries(env)["G"][1])
    c = await env.check_counters()
    expect(c["evictions"] == 0, f"perf_evictions {c['evictions']}: two VMs' keys must not collide")
    await env.finish()


@cocotb.test()
async def test_vmid_inval_scoping(dut):
    """Kinds 1-5 act inside inval.vmid, kind 6 removes every entry of inval.vmid, kind 7 the
    entries of inval.vmid covering inval.vpn whatever their owner (global, private, shared);
    kind 0 removes every VM's entries. The other VM's copies of the same keys always stay
    (kind 0 aside). No kind is reserved: perf_badInvals stays 0."""
    env = await setup(dut, "vmid_inval")
    ent = _vm_entries(env)
    vp, vg, vs = ent["P"][0]["vpn"], ent["G"][0]["vpn"], ent["S"][1]["vpn"]
    vmax = pmax(env, "fill_bits_vmid")
    # (kind, operands, names removed in VM a) -- from the doc's kinds table
    cases = [
        (0, {}, "PGS"),
        (1, {}, "PS"),
        (2, dict(pcid=1), "P"),
        (2, dict(pcid=3), ""),          # S was filled by pcid 3 but is shared: kind 2 spares it
        (3, dict(ccid=1), "PS"),
        (3, dict(ccid=2), ""),          # G has ccid 2 but is global
        (4, dict(pcid=1, vpn=vp), "P"),
        (5, dict(ccid=1, vpn=vs | 0x1FF), "S"),
        (6, dict(pcid=0, ccid=0, vpn=vp), "PGS"),
        (7, dict(vpn=vg), "G"),
        (7, dict(vpn=vp, pcid=2, ccid=2), "P"),   # pcid / ccid do not matter
        (7, dict(vpn=vs | 0x100), "S"),
        (7, dict(vpn=vs + (1 << PAGE_LOW_BITS[1])), ""),   # the next 2 MiB page: nothing
    ]
    for a, b in ((1, 0), (0, vmax)):
        for kind, ops, gone in cases:
            await env.do_inval(kind=0)
            await _vm_fill_all(env, [a, b])
            await env.do_inval(kind=kind, vmid=a, **ops)
            both = {(n, v) for n in "PGS" for v in (a, b)}
            removed = {(n, a) for n in gone} | ({(n, b) for n in gone} if kind == 0 else set())
            await _vm_probe(env, [a, b], both - removed,
                            f"after kind {kind} {ops} in VM {a} (VM {b} beside it)")
    c = await env.check_counters()
    expect(c["badInvals"] == 0, f"perf_badInvals {c['badInvals']}: kinds 6, 7 are defined")
    await env.finish()


@cocotb.test()
async def test_vmid_same_cycle(dut):
    """Doc "Same-cycle inputs" with VMIDs: inval, fill and lookup presented in one cycle are
    accepted inval > fill > lookup, each seeing the earlier ones: a kind-6 / kind-7
    invalidation of VM a does not remove the fill of VM a presented with it (the fill comes
    after), and the lookup sees that fill; a fill of VM a presented with a lookup of VM b for
    the same page leaves the lookup a miss."""
    env = await setup(dut, "vmid_same_cycle")
    v = vpn_in_set(env, 1, 3)
    a, b = 1, 0
    for kind in (6, 7):
        await env.do_fill(vmid=a, vpn=v, ppn=0x31, pcid=1, ccid=1)
        await env.do_fill(vmid=b, vpn=v, ppn=0x32, pcid=1, ccid=1)
        lk = env.send_lookup(vmid=a, vpn=v, pcid=1, ccid=1)
        env.send_fill(vmid=a, vpn=v, ppn=0x33 + kind, pcid=1, ccid=1)
        env.send_inval(kind=kind, vmid=a, vpn=v)
        await env.drain()
        hist = [h.split()[1] for h in list(env.history)[-3:]]
        expect(hist == ["inval", "fill", "lookup"], f"kind {kind}: acceptance order {hist}")
        expect(lk["_resp"]["hit"] == 1 and lk["_resp"]["ppn"] == 0x33 + kind,
               f"kind {kind}: the lookup must see the fill accepted after the inval: {lk['_resp']}")
        await expect_hit(env, f"kind {kind}: VM b untouched", 0x32, vmid=b, vpn=v, pcid=1, ccid=1)
        await env.do_inval(kind=0)
    # a fill of VM a and a lookup of VM b for the same page, one cycle
    lk = env.send_lookup(vmid=b, vpn=v, pcid=1, ccid=1)
    env.send_fill(vmid=a, vpn=v, ppn=0x40, glob=1)
    await env.drain()
    expect(lk["_resp"]["hit"] == 0, f"VM {b} must not see VM {a}'s global fill: {lk['_resp']}")
    await expect_hit(env, "the fill landed in VM a", 0x40, vmid=a, vpn=v, pcid=3, ccid=2)
    await env.finish()
