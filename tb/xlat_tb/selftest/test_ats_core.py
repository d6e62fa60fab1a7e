"""Unit tests of the ATS / IOMMU responder (xlat_tb.ats) without a simulator: the table, the
core's scheduling and injections, and the CycleLoop component on a fake DUT (plain objects with
``.value``) that plays the DevTlb's side of the two channels."""

import random
from types import SimpleNamespace

import pytest

from xlat_tb.ats import (PS_1G, PS_2M, PS_4K, PS_BAD, AtsAnswer, AtsCore, AtsError, AtsPorts,
                         AtsResponder, AtsTable)
from xlat_tb.backpressure import Always, RandomGaps
from xlat_tb.seed import rng as seeded_rng

REQ_FIELDS = {"tag": 6, "sid": 16, "iova": 52, "prefetch": 1}
RESP_FIELDS = {"tag": 6, "ppn": 40, "perm_r": 1, "perm_w": 1, "pageSize": 2, "fault": 1}


def table():
    t = AtsTable()
    t.map(1, 0x10, 0x100)                              # 4 KiB
    t.map(1, 0x400, 0x2000, PS_2M, perm_w=0)           # 2 MiB, read-only
    t.map(2, 0x40000, 0x80000, PS_1G)                  # 1 GiB
    return t


# ----------------------------------------------------------------------------- table
def test_table_sizes_perms_faults():
    t = table()
    assert t.translate(1, 0x10) == AtsAnswer(0, 0x100, PS_4K, 1, 1)
    a = t.translate(1, 0x5FF)
    assert a == AtsAnswer(0, 0x2000, PS_2M, 1, 0) and a.ppn_for(0x5FF) == 0x21FF
    a = t.translate(2, 0x40000 + 0x12345)
    assert a.pageSize == PS_1G and a.ppn_for(0x52345) == 0x92345
    assert t.translate(1, 0x11).fault == 1             # unmapped
    assert t.translate(3, 0x10).fault == 1             # other SID
    t.map(1, 0x401, 0x777)                             # a 4 KiB page inside the 2 MiB one wins
    assert t.translate(1, 0x401) == AtsAnswer(0, 0x777, PS_4K, 1, 1)
    # the rest of the 2 MiB page is no longer uniform: answered as 4 KiB pieces
    assert t.translate(1, 0x5FF) == AtsAnswer(0, 0x21FF, PS_4K, 1, 0)
    t.set_fault(1, 0x402)
    assert t.translate(1, 0x402).fault == 1 and t.translate(1, 0x403).fault == 0
    v = t.version
    assert [m.size for m in t.unmap(1, 0x401)] == [PS_4K, PS_2M]
    assert t.translate(1, 0x403).fault == 1 and t.version > v
    with pytest.raises(ValueError, match="aligned"):
        t.map(1, 0x401, 0x200, PS_2M)
    with pytest.raises(ValueError, match="aligned"):
        t.map(1, 0x400, 0x201, PS_2M)


def test_answer_size_is_largest_uniform_piece():
    """A 1 GiB page with a 4 KiB override in its 2 MiB region 3: pages of other regions get a
    2 MiB answer (their piece), pages of region 3 a 4 KiB answer; removing the override
    restores the 1 GiB answer."""
    t = AtsTable()
    t.map(5, 0, 0x80000, PS_1G, perm_w=0)
    t.set_fault(5, 3 * 512 + 7)
    assert t.translate(5, 0x10) == AtsAnswer(0, 0x80000, PS_2M, 1, 0)
    assert t.translate(5, 5 * 512 + 1) == AtsAnswer(0, 0x80000 + 5 * 512, PS_2M, 1, 0)
    assert t.translate(5, 3 * 512 + 6) == AtsAnswer(0, 0x80000 + 3 * 512 + 6, PS_4K, 1, 0)
    assert t.translate(5, 3 * 512 + 7).fault == 1
    assert t.translate(6, 0x10).fault == 1
    t.set_fault(5, 3 * 512 + 7, on=False)
    assert t.translate(5, 3 * 512 + 6) == AtsAnswer(0, 0x80000, PS_1G, 1, 0)
    t.map(5, 0x200, 0x1000, PS_2M)                     # a 2 MiB mapping inside the 1 GiB
    assert t.translate(5, 0x201) == AtsAnswer(0, 0x1000, PS_2M, 1, 1)
    assert t.translate(5, 0x401) == AtsAnswer(0, 0x80400, PS_2M, 1, 0)


def test_map_random_aligned():
    rng = random.Random(5)
    t = AtsTable()
    for size in (PS_4K, PS_2M, PS_1G):
        m = t.map_random(rng, 7, 0x123456, size, ppn_bits=40)
        low = (1 << (9 * size)) - 1
        assert m.iova == 0x123456 & ~low and m.ppn & low == 0 and m.ppn < 1 << 40


# ----------------------------------------------------------------------------- core
def run_core(core, n_req=200, seed=1, ready_p=1.0, max_cycles=20000, tags=64, on_resp=None,
             req_p=1.0):
    """Drive the core like a DUT: requests with free tags, accept completions with prob."""
    rng = random.Random(seed)
    free = list(range(tags))
    sent, done = {}, []
    cycle = 0
    issued = 0
    while (issued < n_req or not core.idle) and cycle < max_cycles:
        cycle += 1
        if core.cur is None:
            core.next_response(cycle)
        if core.cur is not None and rng.random() < ready_p:
            r = core.responded(cycle)
            done.append(r)
            if r.seq >= 0:
                assert sent.pop(r.tag) is r
                free.append(r.tag)
            if on_resp:
                on_resp(r)
        if issued < n_req and free and rng.random() < req_p and core.req_ready(cycle):
            tag = free.pop(rng.randrange(len(free)))
            sent[tag] = core.accept(dict(tag=tag, sid=rng.choice((1, 2, 3)),
                                         iova=rng.choice((0x10, 0x450, 0x52345, 0x11)),
                                         prefetch=rng.randrange(2)), cycle)
            issued += 1
    assert not sent and core.idle, "every request answered"
    return done


def test_latency_bounds_and_reorder():
    core = AtsCore(table(), random.Random(2), tag_bits=6, ppn_bits=40, latency=(3, 9))
    done = run_core(core)
    real = [r for r in done if r.seq >= 0]
    assert len(real) == 200
    assert all(3 <= r.resp_cycle - r.req_cycle and r.due - r.req_cycle <= 9 for r in real)
    assert all(r.present_cycle >= r.due for r in real)
    seqs = [r.seq for r in real]
    assert seqs != sorted(seqs), "completions out of order"
    core2 = AtsCore(table(), random.Random(2), tag_bits=6, ppn_bits=40, latency=(3, 9),
                    reorder=False)
    done2 = run_core(core2)
    # in order: a completion is never presented while an older due one waits
    for r in done2:
        assert all(not (o.seq < r.seq and o.due <= r.present_cycle and
                        (o.present_cycle or 1 << 30) > r.present_cycle) for o in done2)


def test_answers_follow_table_and_translate_time():
    t = table()
    core = AtsCore(t, random.Random(3), tag_bits=6, ppn_bits=40, latency=(5, 5))
    core.accept(dict(tag=4, sid=1, iova=0x10, prefetch=0), cycle=1)
    t.map(1, 0x10, 0x999)                              # change after the request
    assert core.next_response(5) is None               # not due before cycle 6
    r = core.next_response(6)
    assert r.resp == dict(tag=4, ppn=0x100, perm_r=1, perm_w=1, pageSize=0, fault=0)
    assert r.table_version < t.version
    core.responded(6)
    core_late = AtsCore(t, random.Random(3), tag_bits=6, ppn_bits=40, latency=(5, 5),
                        translate_at="response")
    core_late.accept(dict(tag=4, sid=1, iova=0x10, prefetch=0), cycle=1)
    t.map(1, 0x10, 0x555)
    assert core_late.next_response(6).resp["ppn"] == 0x555


def test_duplicate_tag_is_a_dut_error():
    core = AtsCore(table(), random.Random(1), tag_bits=6, ppn_bits=40)
    core.accept(dict(tag=9, sid=1, iova=0x10, prefetch=0), 1)
    with pytest.raises(AtsError, match="already outstanding"):
        core.accept(dict(tag=9, sid=1, iova=0x11, prefetch=0), 2)


def test_max_outstanding_and_req_backpressure():
    core = AtsCore(table(), random.Random(1), tag_bits=6, ppn_bits=40, max_outstanding=2,
                   latency=(50, 50))
    assert core.req_ready(1) == 1
    core.accept(dict(tag=0, sid=1, iova=0x10, prefetch=0), 1)
    core.accept(dict(tag=1, sid=1, iova=0x10, prefetch=0), 2)
    assert core.req_ready(3) == 0
    stalled = AtsCore(table(), random.Random(1), tag_bits=6, ppn_bits=40, req_ready=Always())
    assert stalled.req_ready(1) == 0
    half = AtsCore(table(), random.Random(1), tag_bits=6, ppn_bits=40,
                   req_ready=RandomGaps(random.Random(4), 0.5))
    n = sum(half.req_ready(c) for c in range(2000))
    assert 800 < n < 1200


def test_resp_valid_gaps():
    core = AtsCore(table(), random.Random(1), tag_bits=6, ppn_bits=40, latency=(0, 0),
                   resp_gaps=RandomGaps(random.Random(7), 0.5))
    for tag in range(20):
        core.accept(dict(tag=tag, sid=1, iova=0x10, prefetch=0), 0)
    presented = []
    for c in range(1, 41):
        if core.next_response(c) is not None:
            core.responded(c)
            presented.append(c)
    replay = RandomGaps(random.Random(7), 0.5)          # the same draws, one per cycle
    busy = [c for c in range(1, 41) if not replay.idle()]
    assert presented == busy[:20] and len(busy) < 40


def test_injections_shape_and_counts():
    core = AtsCore(table(), random.Random(11), tag_bits=6, ppn_bits=40, latency=(1, 4),
                   fault_p=0.1, pagesize3_p=0.1, unaligned_p=0.5, bogus_p=0.05)
    done = run_core(core, n_req=2000, req_p=0.3)
    st = core.stats
    assert min(st["fault"], st["pagesize3"], st["unaligned"], st["bogus"]) > 0
    for r in done:
        if "bogus" in r.injected:
            # never a tag outstanding when it was presented: checked by run_core (sent.pop)
            assert r.seq < 0
        elif "pagesize3" in r.injected:
            assert r.resp["pageSize"] == PS_BAD and r.resp["fault"] == 0
        elif "unaligned" in r.injected:
            low = (1 << (9 * r.answer.pageSize)) - 1
            assert r.answer.pageSize in (PS_2M, PS_1G) and r.resp["ppn"] & low
            assert r.resp["ppn"] & ~low == r.answer.ppn
        elif "fault" in r.injected:
            assert r.resp["fault"] == 1
        else:
            a = r.answer
            assert r.resp == dict(tag=r.tag, ppn=a.ppn, perm_r=a.perm_r, perm_w=a.perm_w,
                                  pageSize=a.pageSize, fault=a.fault)
    core.injections_enabled = False
    done = run_core(core, n_req=300)
    assert all(not r.injected for r in done)


def test_bogus_tags_never_outstanding_and_override():
    core = AtsCore(table(), random.Random(1), tag_bits=2, ppn_bits=40, latency=(10, 10))
    for tag in (0, 1, 3):
        core.accept(dict(tag=tag, sid=1, iova=0x10, prefetch=0), 0)
    assert core.inject_bogus().tag == 2                # the only tag not outstanding
    with pytest.raises(ValueError, match="outstanding"):
        core.inject_bogus(tag=1)
    core.override(3, fault=1, pageSize=PS_BAD)
    r = core.next_response(1)
    assert r.injected == ("bogus",) and r.tag == 2
    core.responded(1)
    got = {}
    for c in range(2, 30):
        if core.cur is None and core.next_response(c) is not None:
            r = core.responded(c)
            got[r.tag] = r
    assert got[3].resp["fault"] == 1 and got[3].resp["pageSize"] == PS_BAD
    assert "override" in got[3].injected and got[0].resp["fault"] == 0
    chooser = AtsCore(table(), random.Random(1), tag_bits=4, ppn_bits=40,
                      bogus_tag_fn=lambda rng, out: 15)
    assert chooser.inject_bogus().tag == 15


def test_seeded_determinism():
    """Same seed (xlat_tb.seed.rng) -> the same schedule; another seed -> another."""
    def trace(seed):
        core = AtsCore(table(), seeded_rng("ats", seed), tag_bits=6, ppn_bits=40,
                       latency=(1, 30), fault_p=0.1, unaligned_p=0.3)
        return [(r.tag, r.resp_cycle, tuple(sorted(r.resp.items()))) for r in run_core(core)]
    assert trace(5) == trace(5) and trace(5) != trace(6)


# ------------------------------------------------------------------ responder, fake DUT
class Sig:
    def __init__(self, v=0):
        self.value = v


def fake_dut():
    names = [f"ats_req_bits_{f}" for f in REQ_FIELDS] + [f"ats_resp_bits_{f}" for f in RESP_FIELDS]
    names += ["ats_req_valid", "ats_req_ready", "ats_resp_valid", "ats_resp_ready"]
    return SimpleNamespace(**{n: Sig() for n in names})


def test_responder_on_fake_dut_holds_and_answers_once():
    """The component on a fake DUT with random ready: a presented completion never changes
    while ats_resp_ready is low, every request is answered exactly once, and ats_req is only
    taken while ats_req_ready is high."""
    dut = fake_dut()
    rng = random.Random(9)
    core = AtsCore(table(), random.Random(10), tag_bits=6, ppn_bits=40, latency=(1, 8),
                   req_ready=RandomGaps(random.Random(12), 0.3),
                   resp_gaps=RandomGaps(random.Random(13), 0.2), fault_p=0.1, bogus_p=0.02)
    ports = AtsPorts(dut, req_fields=REQ_FIELDS, resp_fields=RESP_FIELDS, rng=random.Random(1))
    resp = AtsResponder(ports, core)
    reqs, resps = [], []
    resp.on_request.append(lambda r, c: reqs.append(r))
    resp.on_response.append(lambda r, c: resps.append(r))
    free, outstanding = list(range(64)), set()
    held = None
    issued = 0
    for cycle in range(1, 3000):
        # DUT side drives its outputs for this cycle
        if dut.ats_req_valid.value == 0 and issued < 300 and free and rng.random() < 0.7:
            t = free.pop(rng.randrange(len(free)))
            dut.ats_req_bits_tag.value, dut.ats_req_bits_sid.value = t, 1
            dut.ats_req_bits_iova.value, dut.ats_req_bits_prefetch.value = 0x10, 0
            dut.ats_req_valid.value = 1
            issued += 1
        dut.ats_resp_ready.value = int(rng.random() < 0.6)
        resp.drive(cycle)
        now = {f: dut.__dict__[f"ats_resp_bits_{f}"].value for f in RESP_FIELDS}
        if dut.ats_resp_valid.value:
            if held is not None:
                assert now == held, "completion changed while not accepted"
            held = now
        n_before = len(reqs)
        resp.sample(cycle)
        if dut.ats_resp_valid.value and dut.ats_resp_ready.value:
            held = None
            r = resps[-1]
            assert {f: r.resp[f] for f in RESP_FIELDS} == now
            if r.seq >= 0:
                outstanding.remove(r.tag)
                free.append(r.tag)
            else:
                assert r.tag not in outstanding
        if len(reqs) > n_before:
            assert dut.ats_req_ready.value == 1 and dut.ats_req_valid.value == 1
            outstanding.add(reqs[-1].tag)
            dut.ats_req_valid.value = 0
    assert issued == 300 and len([r for r in resps if r.seq >= 0]) == 300 and not outstanding
    assert resp.resp_stall_cycles > 0 and core.stats["bogus"] > 0 and core.stats["fault"] > 0
    with pytest.raises(AttributeError, match="no port"):
        AtsPorts(SimpleNamespace(), req_fields=REQ_FIELDS, resp_fields=RESP_FIELDS)
