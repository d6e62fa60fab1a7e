"""Unit tests of models/pml.py (pure Python), every expectation derived by hand from
docs/pml-logger.md."""

import pytest

from models.pml import (CTRL_EPML, CTRL_PML, EXIT_REASON, GUEST, PML, ST_FULL, ST_GUEST_FULL,
                        ST_WRITE_ERROR, ModelError, PmlModel, PmlOptions, PmlParams,
                        default_registers, sign_extend)

SMALL = dict(contexts=2, paBits=32, vaBits=39, entries=4, queueDepth=2, idBits=2, vmidBits=2,
             asidBits=2, dedupEntries=0)


def mk(**over):
    return PmlModel(PmlParams.from_dict({**SMALL, **over}))


def addr(m, ctx, name):
    return m.regs.addr(ctx, name)


def rd(m, ctx, name):
    v, err = m.csr(addr(m, ctx, name), 0)
    assert err == 0
    return v


def wr(m, ctx, name, v):
    _, err = m.csr(addr(m, ctx, name), 1, v)
    assert err == 0


def drain(m):
    """Issue every eligible write (reference arbiter) and answer it without error."""
    out = []
    while True:
        w = m.issue()
        if w is None:
            return out
        m.response(w.id, 0)
        out.append(w)


# ----------------------------------------------------------------------------- basics
def test_params_and_registers():
    p = PmlParams.from_dict({"contexts": "3", "formalPorts": "true", "unknown": 1})
    assert p.contexts == 3 and p.formalPorts is True and p.entries == 512
    m = mk()
    assert m.regs.addr(1, "PML_INDEX") == 0x90 and m.regs.addr(0, "ACK") == 0x40
    assert m.regs.mask("PML_ADDR") == 0xFFFFF000           # paBits 32, bits 31:12
    assert m.regs.mask("TRACK_ASID") == 0x3 and m.regs.mask("IRQ_VECTOR") == 0xFF
    assert [r["name"] for r in default_registers(p)][-2:] == ["STATUS", "ACK"]


def test_sign_extend():
    assert sign_extend(0x7FFFFFF000, 39) == 0xFFFFFFFFFFFFF000
    assert sign_extend(0x3FFFFFF000, 39) == 0x3FFFFFF000
    assert sign_extend(0x100000000000000, 57) == 0xFF00000000000000


def test_reset_values_and_masks():
    m = mk()
    for name in ("CTRL", "PML_ADDR", "PML_INDEX", "GPML_ADDR", "GPML_INDEX", "TRACK_ASID",
                 "IRQ_VECTOR", "STATUS", "ACK"):
        assert rd(m, 1, name) == 0
    wr(m, 0, "PML_ADDR", (1 << 64) - 1)
    assert rd(m, 0, "PML_ADDR") == 0xFFFFF000
    wr(m, 0, "PML_INDEX", 0x12345)
    assert rd(m, 0, "PML_INDEX") == 0x2345
    wr(m, 0, "CTRL", 0xFF)
    assert rd(m, 0, "CTRL") == 3
    wr(m, 0, "IRQ_VECTOR", 0x1FF)
    assert rd(m, 0, "IRQ_VECTOR") == 0xFF
    assert rd(m, 1, "CTRL") == 0                          # contexts are separate


def test_bad_csrs_change_nothing():
    m = mk()
    wr(m, 0, "PML_INDEX", 3)
    bad = [(0x11, 1), (0x14, 0), (0x48, 0), (0x78, 1), (0x100, 0), (0x100 + 0x10, 1),
           (0xFFF8, 1), (addr(m, 0, "STATUS"), 1)]
    for a, w in bad:
        assert m.csr(a, w, 0xFFFF) == (0, 1), hex(a)
    assert m.counters["badCsrs"] == len(bad)
    assert rd(m, 0, "PML_INDEX") == 3 and rd(m, 0, "STATUS") == 0
    assert m.csr(addr(m, 1, "ACK"), 0) == (0, 0)           # ACK reads 0, no error
    assert m.csr(addr(m, 1, "STATUS"), 0) == (0, 0)


# ----------------------------------------------------------------------------- PML
def setup_pml(m, ctx=0, base=0x10000, index=3, ctrl=CTRL_PML):
    m.configure(ctx, pml_addr=base, pml_index=index, ctrl=ctrl)


def test_pml_fill_exit_and_resume():
    m = mk()
    setup_pml(m, base=0x10ABC)                   # low 12 bits are not stored
    assert rd(m, 0, "PML_ADDR") == 0x10000
    got = []
    for g in (0x111, 0x222, 0x333, 0x444):
        assert m.accept(0, g, 0, 0)[0] == "queued"
        w = m.issue()
        got.append((w.addr, w.data))
        m.response(w.id, 0)
    assert got == [(0x10018, 0x111000), (0x10010, 0x222000), (0x10008, 0x333000),
                   (0x10000, 0x444000)]
    assert rd(m, 0, "PML_INDEX") == 0xFFFF and rd(m, 0, "STATUS") == 0   # no exit yet
    assert not m.pending_exits
    m.accept(0, 0x555, 0, 0)                     # finds the index out of range
    assert rd(m, 0, "STATUS") == ST_FULL and len(m.pending_exits) == 1
    assert m.issue() is None
    m.accept(0, 0x666, 0, 0)                     # held too, no second exit
    assert len(m.pending_exits) == 1 and m.counters["exits"] == 1
    assert m.queue_full(0)
    with pytest.raises(ModelError):              # dirty_ready must be low now
        m.accept(0, 0x777, 0, 0)
    x = m.take_exit(0, EXIT_REASON)
    assert x.vmid == 0 and x.event.gpa == 0x555
    # software: drain, index, ack
    wr(m, 0, "PML_INDEX", 3)
    wr(m, 0, "ACK", ST_FULL)
    w = drain(m)
    assert [(x.addr, x.data) for x in w] == [(0x10018, 0x555000), (0x10010, 0x666000)]
    assert rd(m, 0, "PML_INDEX") == 1 and not m.pending_exits and rd(m, 0, "STATUS") == 0
    assert m.counters["logged"] == 6 and m.counters["exits"] == 1


def test_ack_while_full_raises_again():
    m = mk()
    setup_pml(m, index=0)
    m.accept(0, 1, 0, 0)
    drain(m)
    m.accept(0, 2, 0, 0)                          # exit 1
    m.take_exit(0, EXIT_REASON)
    wr(m, 0, "ACK", ST_FULL)                      # index still 0xFFFF: the waiting part raises
    assert rd(m, 0, "STATUS") == ST_FULL and len(m.pending_exits) == 1
    assert m.counters["exits"] == 2
    m.take_exit(0, EXIT_REASON)
    with pytest.raises(ModelError):
        m.take_exit(0, EXIT_REASON)               # no third one


def test_ack_with_nothing_waiting_raises_on_next_event():
    m = mk()
    setup_pml(m, index=0)
    m.accept(0, 1, 0, 0)
    drain(m)
    m.accept(0, 2, 0, 0)
    m.take_exit(0, EXIT_REASON)
    wr(m, 0, "PML_INDEX", 0)
    drain(m)                                     # event 2 written at index 0
    wr(m, 0, "ACK", ST_FULL)
    assert not m.pending_exits
    m.accept(0, 3, 0, 0)
    assert len(m.pending_exits) == 1


def test_software_index_out_of_range():
    m = mk()
    setup_pml(m, index=0x8000)
    m.accept(0, 7, 0, 0)
    assert len(m.pending_exits) == 1 and m.issue() is None
    wr(m, 0, "PML_INDEX", 4)                     # == entries: still out of range
    wr(m, 0, "ACK", ST_FULL)                     # re-raised while the exit is still offered:
    assert len(m.pending_exits) == 1             # merged (one pending flag per context)
    assert m.counters["exits"] == 1 and rd(m, 0, "STATUS") == ST_FULL


def test_round_robin_and_no_head_of_line_blocking():
    m = mk()
    setup_pml(m, 0, 0x10000, 0)
    setup_pml(m, 1, 0x20000, 3)
    m.accept(0, 0xA, 0, 0)
    drain(m)
    m.accept(0, 0xB, 0, 0)                       # ctx 0 held
    m.accept(0, 0xC, 0, 0)
    for g in (1, 2, 3):
        m.accept(1, g, 0, 0)
        w = m.issue()
        assert w.ctx == 1 and w.data == g << 12
        m.response(w.id, 0)
    m2 = mk()
    setup_pml(m2, 0, 0x10000, 3)
    setup_pml(m2, 1, 0x20000, 3)
    for g in (1, 2):
        m2.accept(0, g, 0, 0)
        m2.accept(1, g + 8, 0, 0)
    order = [m2.issue().ctx for _ in range(4)]
    assert order == [0, 1, 0, 1]


# ----------------------------------------------------------------------------- EPML
def test_epml_asid_filter_sign_extension_and_irq():
    m = mk()
    m.configure(0, pml_addr=0x10000, pml_index=3, gpml_addr=0x30000, gpml_index=1,
                track_asid=2, irq_vector=0x42, ctrl=CTRL_PML | CTRL_EPML)
    m.accept(0, 0x111, 0x7FFFFFF, 2)             # tracked
    m.accept(0, 0x222, 0x1234, 1)                # other asid: PML part only
    w = drain(m)
    assert [(x.part, x.addr, x.data) for x in w] == [
        (PML, 0x10018, 0x111000), (GUEST, 0x30008, 0xFFFFFFFFFFFFF000),
        (PML, 0x10010, 0x222000)]
    assert m.counters["logged"] == 2 and m.counters["guestLogged"] == 1
    m.accept(0, 0x333, 0x5, 2)
    w = drain(m)
    assert [(x.part, x.addr, x.data) for x in w] == [(PML, 0x10008, 0x333000),
                                                      (GUEST, 0x30000, 0x5000)]
    m.accept(0, 0x444, 0x6, 2)                   # guest buffer out of range: irq
    assert len(m.pending_irqs) == 1 and rd(m, 0, "STATUS") == ST_GUEST_FULL
    w = drain(m)                                 # the PML part still goes
    assert [(x.part, x.data) for x in w] == [(PML, 0x444000)]
    m.accept(0, 0x555, 0x7, 1)                   # waits behind the head (head-only)
    assert m.issue() is None
    assert m.take_irq(0, 0x42).event.gva == 6
    with pytest.raises(ModelError):
        m.take_irq(0, 0x42)
    wr(m, 0, "GPML_INDEX", 1)
    wr(m, 0, "ACK", ST_GUEST_FULL)
    w = drain(m)
    # the PML buffer took 0x111..0x444 at indexes 3..0: event 0x555 finds it full
    assert [(x.part, x.addr, x.data) for x in w] == [(GUEST, 0x30008, 0x6000)]
    assert [(x.vmid, x.event.gpa) for x in m.pending_exits] == [(0, 0x555)]


def test_epml_only_and_irq_vector_at_raise():
    m = mk()
    m.configure(1, gpml_addr=0x40000, gpml_index=0, track_asid=1, irq_vector=7, ctrl=CTRL_EPML)
    m.accept(1, 0x9, 0x10, 1)
    (w,) = drain(m)
    assert (w.part, w.addr, w.data) == (GUEST, 0x40000, 0x10000)
    m.accept(1, 0x9, 0x11, 1)
    wr(m, 1, "IRQ_VECTOR", 9)                    # after the raise: the irq keeps 7
    with pytest.raises(ModelError):
        m.take_irq(1, 9)
    m.take_irq(1, 7)


def test_pml_part_first_rule():
    m = mk()
    m.configure(0, pml_addr=0x10000, pml_index=3, gpml_addr=0x30000, gpml_index=3,
                track_asid=0, ctrl=CTRL_PML | CTRL_EPML)
    m.now = 10
    m.accept(0, 1, 2, 0)
    m.now = 20
    with pytest.raises(ModelError, match="PML part first"):
        m.write(0x30018, 0x2000, 0, presented=20)
    m.write(0x30018, 0x2000, 0, presented=11)    # presented within the slack: allowed
    m.write(0x10018, 0x1000, 1, presented=20)


def test_noparts_option():
    for opt, kind, ign in (("queue", "noparts", 0), ("ignored", "ignored", 1)):
        m = PmlModel(PmlParams.from_dict(SMALL), options=PmlOptions(noparts=opt))
        m.configure(0, track_asid=1, ctrl=CTRL_EPML)
        assert m.accept(0, 1, 1, 0)[0] == kind
        assert m.occupancy(0) == 0 and m.counters["ignored"] == ign


# ----------------------------------------------------------------------------- ignored
def test_ignored_events_and_dropped_parts():
    m = mk()
    assert m.accept(0, 1, 1, 0)[0] == "ignored"            # disabled context
    assert m.accept(2, 1, 1, 0)[0] == "ignored"            # contexts = 2: unknown
    assert m.accept(3, 1, 1, 0)[0] == "ignored"
    assert m.counters["ignored"] == 3 and m.quiet
    setup_pml(m, index=0)
    m.accept(0, 1, 0, 0)
    drain(m)
    m.accept(0, 2, 0, 0)                                   # held (exit)
    m.accept(0, 3, 0, 0)
    wr(m, 0, "CTRL", 0)                                    # both parts dropped
    assert m.counters["ignored"] == 5 and m.occupancy(0) == 0
    assert len(m.pending_exits) == 1                       # the raised exit stays owed


# ----------------------------------------------------------------------------- writes
def test_write_errors_consume_the_index_once():
    m = mk()
    setup_pml(m, index=3)
    m.accept(0, 1, 0, 0)
    m.accept(0, 2, 0, 0)
    w1 = m.issue()
    w2 = m.issue()
    assert (w1.index, w2.index) == (3, 2)
    m.response(w2.id, 0)
    m.response(w1.id, 1)
    assert rd(m, 0, "STATUS") == ST_WRITE_ERROR
    assert m.counters["writeErrors"] == 1 and m.counters["logged"] == 1
    assert rd(m, 0, "PML_INDEX") == 1 and m.issue() is None      # not retried
    m.now += 1                                   # (an ACK in the error's cycle keeps it)
    wr(m, 0, "ACK", ST_WRITE_ERROR)
    assert rd(m, 0, "STATUS") == 0
    assert m.response(3, 0) is None and m.counters["badMemResps"] == 1


def test_write_checks():
    m = mk()
    setup_pml(m, index=3)
    m.accept(0, 1, 0, 0)
    with pytest.raises(ModelError, match="no write"):
        m.write(0x10010, 0x1000, 0)                    # wrong index
    with pytest.raises(ModelError, match="data"):
        m.write(0x10018, 0x2000, 0)
    with pytest.raises(ModelError, match="wmask"):
        m.write(0x10018, 0x1000, 0, wmask=0x0F)
    m.write(0x10018, 0x1000, 0, presented=0)
    m.accept(0, 2, 0, 0)
    with pytest.raises(ModelError, match="outstanding"):
        m.write(0x10010, 0x2000, 0)                    # id 0 still outstanding
    m2 = mk(idBits=1)
    setup_pml(m2, index=3)
    for g in (1, 2, 3):
        m2.accept(0, g, 0, 0)
        if g < 3:
            m2.issue()
    with pytest.raises(ModelError, match="2\\^idBits"):
        m2.issue(id=0)


def test_contexts_separate_buffers():
    m = mk()
    setup_pml(m, 0, 0x10000, 1)
    setup_pml(m, 1, 0x20000, 1)
    for i in range(2):
        m.accept(0, 0x100 + i, 0, 0)
        m.accept(1, 0x200 + i, 0, 0)
    drain(m)
    assert [(w.addr, w.data) for w in m.buffer_log(0, PML)] == [(0x10008, 0x100000),
                                                                  (0x10000, 0x101000)]
    assert [(w.addr, w.data) for w in m.buffer_log(1, PML)] == [(0x20008, 0x200000),
                                                                  (0x20000, 0x201000)]


# ----------------------------------------------------------------------------- dedup
def test_dedup_plru():
    """4 entries; tree-PLRU bits [root, left, right]; fills go to the first invalid entry,
    then to the victim."""
    m = mk(dedupEntries=4, queueDepth=16, entries=512)
    setup_pml(m, index=511)
    kinds = []

    def ev(g):
        k, _ = m.accept(0, g, 0, 0)
        kinds.append(k)
        drain(m)
        return k

    for g in (0xA, 0xB, 0xC, 0xD):                    # ways 0..3; bits end [0, 0, 0]
        assert ev(g) == "queued"
    assert m.filter.keys == [(0, 0xA), (0, 0xB), (0, 0xC), (0, 0xD)]
    assert ev(0xB) == "deduped"                       # touch way 1: bits [1, 0, 0]
    assert ev(0xE) == "queued"                        # victim: right, right bit 0 -> way 2
    assert m.filter.keys == [(0, 0xA), (0, 0xB), (0, 0xE), (0, 0xD)]
    # touch 2 -> bits [0, 0, 1]; victim left, left bit 0 -> way 0 (A)
    assert ev(0xF) == "queued" and m.filter.keys[0] == (0, 0xF)
    # touch 0 -> bits [1, 1, 1]; victim right, right bit 1 -> way 3 (D)
    assert ev(0xA) == "queued"                        # A was evicted; it replaces D
    assert m.filter.keys == [(0, 0xF), (0, 0xB), (0, 0xE), (0, 0xA)]
    assert ev(0xE) == "deduped"
    assert m.counters["deduped"] == 2
    # another context's entry of the same page is another key
    m.configure(1, pml_addr=0x20000, pml_index=511, ctrl=CTRL_PML)
    assert m.accept(1, 0xD, 0, 0)[0] == "queued"
    drain(m)
    # a PML_INDEX write forgets that context's pages only
    wr(m, 0, "PML_INDEX", 511)
    assert all(k is None or k[0] == 1 for k in m.filter.keys)
    assert m.accept(0, 0xD, 0, 0)[0] == "queued"
    assert m.accept(1, 0xD, 0, 0)[0] == "deduped"


def test_dedup_touch_option():
    m = PmlModel(PmlParams.from_dict({**SMALL, "dedupEntries": 2, "queueDepth": 8,
                                      "entries": 64}),
                 options=PmlOptions(dedup_touch_on_hit=False))
    setup_pml(m, index=63)
    for g in (1, 2):
        m.accept(0, g, 0, 0)                       # ways 0, 1; bit -> 0 (victim way 0)
    assert m.accept(0, 1, 0, 0)[0] == "deduped"     # no touch: victim stays way 0
    m.accept(0, 3, 0, 0)
    assert m.filter.keys == [(0, 3), (0, 2)]
    m2 = PmlModel(PmlParams.from_dict({**SMALL, "dedupEntries": 2, "queueDepth": 8,
                                       "entries": 64}))
    setup_pml(m2, index=63)
    for g in (1, 2, 1, 3):
        m2.accept(0, g, 0, 0)
    assert m2.filter.keys == [(0, 1), (0, 3)]       # touch on hit: victim way 1


def test_dedup_ignored_events_not_remembered():
    m = mk(dedupEntries=2)
    assert m.accept(0, 5, 0, 0)[0] == "ignored"
    setup_pml(m, index=3)
    assert m.accept(0, 5, 0, 0)[0] == "queued"


# ----------------------------------------------------------------------------- same cycle
def test_same_cycle_fill_beats_forget():
    """docs/pml-logger.md, Same-cycle inputs: an event accepted in the cycle of a PML_INDEX
    write looks the filter up before the forget, and its new entry survives it."""
    m = PmlModel(PmlParams(contexts=2, entries=8, dedupEntries=4))
    setup_pml(m, 0, 0x10000, 7)
    setup_pml(m, 1, 0x20000, 7)
    m.now = 10
    m.accept(0, 0x111, 0, 0)
    m.now = 11
    assert m.accept(0, 0x111, 0, 0)[0] == "deduped"   # hit: before the forget
    assert m.accept(0, 0x222, 0, 0)[0] == "queued"    # filled in this cycle
    wr(m, 0, "PML_INDEX", 7)                          # same cycle: forgets 0x111 only
    m.now = 12
    assert m.accept(0, 0x222, 0, 0)[0] == "deduped"
    assert m.accept(0, 0x111, 0, 0)[0] == "queued"


def test_same_cycle_write_error_beats_ack():
    """An error response in the cycle of an ACK of writeError leaves writeError set, in
    either call order."""
    for ack_first in (False, True):
        m = mk()
        setup_pml(m, index=3)
        m.now = 5
        m.accept(0, 0x1, 0, 0)
        m.accept(0, 0x2, 0, 0)
        w1, w2 = m.issue(), m.issue()
        m.response(w1.id, 1)
        m.now = 9
        if ack_first:
            wr(m, 0, "ACK", ST_WRITE_ERROR)
            m.response(w2.id, 1)
        else:
            m.response(w2.id, 1)
            wr(m, 0, "ACK", ST_WRITE_ERROR)
        assert rd(m, 0, "STATUS") == ST_WRITE_ERROR
        m.now = 10
        wr(m, 0, "ACK", ST_WRITE_ERROR)
        assert rd(m, 0, "STATUS") == 0


def test_merged_reraise_may_follow_the_delivery():
    """A re-raise merged into an offered exit: delivered once; if the exit is taken within
    merge_slack cycles of the merge the DUT may deliver the re-raise once more."""
    m = mk()
    setup_pml(m, index=0x8000)
    m.now = 1
    m.accept(0, 7, 0, 0)
    m.now = 2
    wr(m, 0, "ACK", ST_FULL)                      # merged at 2
    m.now = 3
    m.take_exit(0, EXIT_REASON)
    m.now = 5
    m.take_exit(0, EXIT_REASON)                   # the DUT's late re-raise
    assert m.counters["exits"] == 2
    with pytest.raises(ModelError):
        m.take_exit(0, EXIT_REASON)
