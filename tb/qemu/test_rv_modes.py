"""The cross-check's layout and the model in its modes, without QEMU
(docs/qemu-crosscheck.md): every mapped address the model translates lands where the page-table
builder's own records say, and every planted fault is the trap its kind must give.  Pure Python, about a second."""

from __future__ import annotations

import pytest

from models.ptformats import CMD_READ, CMD_WRITE
from models.walker import WalkerConfig
from xlat_tb.qemu import F_MXR, F_VSMXR

from .crosscheck import CONFIGS, model_run
from .rv_machine import MODEL_DEVIATIONS, build, in_ram
from .rv_modes import (LOAD_ACCESS, LOAD_GUEST_PAGE, LOAD_PAGE, STORE_ACCESS, STORE_GUEST_PAGE,
                       STORE_PAGE, translate)

CODE = (0x8000_1000, 0x8000_2000)          # the stub pages (any two pages of the 1 GiB block)

PAGE = {LOAD_PAGE, STORE_PAGE}
GUEST_PAGE = {LOAD_GUEST_PAGE, STORE_GUEST_PAGE}
ACCESS = {LOAD_ACCESS, STORE_ACCESS}


def _builder_pa(m, c) -> int | None:
    """The PA of case ``c`` from the builder's records (None: not mapped there)."""
    if c.mode == "stage1":
        g = m.satps[c.asid].lookup(c.va)
        return None if g is None else g[0]
    gpa = c.va
    if c.mode == "both":
        g = m.vms[c.vmid].spaces[c.asid].lookup(c.va)
        if g is None:
            return None
        gpa = g[0]
    h = m.vms[c.vmid].host.lookup(gpa)
    return None if h is None else h[0]


# what a planted kind must give (kinds of mode both carry a g_ / h_ / pt_ prefix)
EXPECT = {"noncanonical": PAGE, "gpa_range": GUEST_PAGE | ACCESS, "noram": ACCESS}


def _allowed(c) -> set:
    kind = c.kind
    if kind.endswith("mxr_x_only"):
        # loads of execute-only leaves: MXR makes them readable (the HS-level one every stage,
        # vsstatus.MXR the VS-stage), not for the implicit access to a guest table
        if kind == "pt_mxr_x_only":
            return GUEST_PAGE
        if kind == "g_mxr_x_only" and not c.flags & (F_MXR | F_VSMXR):
            return PAGE
        return {"load"}
    if kind in ("x_only", "h_x_only") and c.cmd == CMD_READ and c.flags & F_MXR:
        return {"load"}                    # an execute-only G-stage leaf, the HS-level MXR
    if kind in EXPECT:
        if c.mode == "stage2" and kind == "gpa_range":
            return GUEST_PAGE
        return EXPECT[kind]
    if kind.startswith("pt_"):
        return GUEST_PAGE if kind != "pt_noram" else ACCESS
    stage = "h" if kind.startswith("h_") or c.mode == "stage2" else "g"
    base = kind.split("_", 1)[1] if kind[:2] in ("g_", "h_") else kind
    if base == "noram":                    # a guest entry's GPA 2^51 is beyond the G-stage
        return GUEST_PAGE if kind == "g_noram" else ACCESS
    if base == "gpa_range":                # a guest leaf beyond the GPA width (both) or PA
        return GUEST_PAGE if c.mode == "both" else ACCESS
    return GUEST_PAGE if stage == "h" else PAGE


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_layout_and_model(config):
    cfg: WalkerConfig = CONFIGS[config]
    m = build(cfg, 3, code=CODE, per_mode=300, fault_rounds=1)
    out = model_run(m)
    checked = planted = 0
    for c, (isa, _, model, _, _) in zip(m.cases, out):
        if c.kind in ("ok", "gpa_top"):     # mapped (random permissions: may fault)
            if model[0] in ("load", "store"):
                pa = _builder_pa(m, c)
                assert pa is not None and in_ram(pa), f"{c}: model {model}, builder {pa}"
                # a data word holds its own PA: the value loaded names the translation
                assert model[1] == pa, f"{c}: model {model}, builder PA {pa:#x}"
                checked += 1
            continue
        planted += 1
        want = _allowed(c)
        if want == {"load"}:
            assert model == ("load", _builder_pa(m, c)), f"{c}: model {model}"
            continue
        if c.kind in MODEL_DEVIATIONS:
            assert model[0] == "trap" and model[1] in GUEST_PAGE and isa[0] != "trap", (c, model,
                                                                                      isa)
            continue
        assert model[0] == "trap" and model[1] in want, f"{c}: model {model}, want {want}"
        assert (model[1] in (STORE_PAGE, STORE_GUEST_PAGE, STORE_ACCESS)) == \
            (c.cmd == CMD_WRITE), (c, model)
    assert checked > 300 and planted > 100, (checked, planted)


def test_stage2_is_the_host_walk():
    """Mode stage2 (the request's mode 2) is the host translation of GPA = VA: the same PA as
    the both-stage walk's data translation of that GPA."""
    cfg = CONFIGS["walker_rv39"]
    m = build(cfg, 5, code=CODE, per_mode=100, fault_rounds=0)
    mem = m.mem.copy()
    n = 0
    for c in m.cases:
        if c.mode != "both":
            continue
        r = translate(mem, cfg, "both", m.request(c))
        if r.fault or r.gpa is None:
            continue
        c2 = type(c)(**{**c.__dict__, "mode": "stage2", "va": r.gpa})
        r2 = translate(mem, cfg, "stage2", m.request(c2))
        assert r2.resp["ppn"] == r.resp["ppn"] and r2.fault == 0, (c, r.resp, r2.resp)
        n += 1
    assert n > 20
