"""Planted mutations for formal/mmu (README.md, "Mutations"): each edits a scratch copy of
build/rtl/mmu_formal/XlatMmu.sv (never the repository), as one bug in one Chisel expression
would (an expression firtool emits twice, the block's input and its dbg_* view, is edited in
both), and runs the mmu_prove task on it; prints the sby status, the phase that failed and the
failed assertions' lines in mmu_fv.sv. The same scheme as formal/devtlb/mutate.py.

    .venv/bin/python formal/mmu/mutate.py [--task mmu_bmc] [name ...]   # all when no name
Work directories: build/formal/mut/mmu_<name>/ (mmu_<name>_bmc with --task mmu_bmc: the same
mutation as a bounded check from reset, to show that a failure the proof finds only in its
induction step is a real trace from reset).
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from mutation import OUT, ROOT, plant_edits, run_sby  # noqa: E402

RTL = ROOT / "build" / "rtl" / "mmu_formal"
TASK = "mmu_prove"

# name -> (what it breaks, the property that must catch it, edits of XlatMmu.sv)
MUTATIONS = {
    "ctx_no_vmid": (
        "the TLB context without the vmid ({mode class, 0}): VMs share entries",
        "(a) A1, A2",
        [("ctx <= {req_bits_mode, req_bits_mode == 2'h1 ? 2'h0 : req_bits_vmid};",
          "ctx <= {req_bits_mode, 2'h0};")]),
    "fill_wrong_ctx": (
        "fills tagged with another mode class (ctx ^ 4: a two-stage entry filed as stage-1-only)",
        "(b) B1",
        [(".fill_bits_vmid             (ctx),", ".fill_bits_vmid             (ctx ^ 4'h4),", 2),
         ("assign dbg_l1_fill_bits_vmid = ctx;", "assign dbg_l1_fill_bits_vmid = ctx ^ 4'h4;"),
         ("assign dbg_l2_fill_bits_vmid = ctx;", "assign dbg_l2_fill_bits_vmid = ctx ^ 4'h4;")]),
    "walk_vmid_zero": (
        "every walk sent with vmid 0 (the stage-1-only rule applied to every mode)",
        "(b) B3, (e) E1 through AW2",
        [("walker_req_bits_vmid = _walker_req_bits_vmid_T ? 2'h0 : rq_vmid;",
          "walker_req_bits_vmid = 2'h0;")]),
    "no_range_check": (
        "a va outside the mode's range looked up (its alias could hit)",
        "(a) A2",
        [("inRange ? {1'h0, l1Enable ? 3'h1 : l2Enable ? 3'h3 : 3'h5} : 4'h5;",
          "{1'h0, l1Enable ? 3'h1 : l2Enable ? 3'h3 : 3'h5};")]),
    "fence_done_early": (
        "fenceDone pulses in FenceWait, before the TLBs showed the invalidation landed",
        "(c) C4",
        [("wire        _fenceDone_T = state == 4'hB;", "wire        _fenceDone_T = state == 4'hA;")]),
    "fence_wait_no_l2": (
        "FenceWait ends on L1's inval_ready alone (L2's removal may not have landed)",
        "(c) C4, C3 order",
        [("_GEN_4 = state == 4'hA & _l1_inval_ready & _l2_inval_ready;",
          "_GEN_4 = state == 4'hA & _l1_inval_ready;")]),
    "fence_during_walk": (
        "a fence accepted while a walk is in flight (no drain)",
        "(c) C1",
        [("assign fence_ready = ~_GEN;", "assign fence_ready = ~_GEN | state == 4'h6;"),
         ("_GEN_19 = ~_GEN & fence_valid;", "_GEN_19 = (~_GEN | state == 4'h6) & fence_valid;")]),
    "gvma_misses_s2only": (
        "hfence.gvma's second invalidation in the two-stage ctx again, not the stage-2-only one",
        "(c) C3, I5",
        [("plan_inv_1_ctx <= {1'h1, plan_isCcid, fence_bits_vmid};",
          "plan_inv_1_ctx <= {2'h3, fence_bits_vmid};")]),
    "flush_vmid_zero": (
        "the walker flush of every fence names vmid 0",
        "(c) C3",
        [("plan_flushVmid <= plan_k[3] | plan_virt ? fence_bits_vmid : 2'h0;", "plan_flushVmid <= 2'h0;")]),
    "no_gib_parts": (
        "a walk's pageSize 3 (a 512 GiB leaf) answered and filled as 3, not as its 1 GiB part (M7)",
        "(b) B2, (e) E1",
        [("wire [1:0]  size = (&_walker_resp_bits_pageSize) ? 2'h2 : _walker_resp_bits_pageSize;",
          "wire [1:0]  size = _walker_resp_bits_pageSize;")]),
    "second_response": (
        "the response state is not left after the response is taken: a second response",
        "(d) D1",
        [("      else if (_GEN_3)\n        state <= 4'h0;", "      else if (_GEN_3)\n        state <= 4'h8;")]),
}


def run(name, task=TASK):
    what, prop, edits = MUTATIONS[name]
    work = OUT / (f"mmu_{name}" if task == TASK else f"mmu_{name}_bmc")
    if not plant_edits(work, RTL, "XlatMmu.sv", edits):
        return name, what, prop, "NOT-APPLIED", "", 0
    sby = (HERE / "mmu.sby").read_text().replace("rtl ../../build/rtl/mmu_formal", "rtl rtl")
    status, where, dt = run_sby(work, HERE, ["mmu_fv.sv", "mmu_ports.svh"], sby, task, "mmu_fv.sv")
    return name, what, prop, status, where, dt


if __name__ == "__main__":
    args = sys.argv[1:]
    task = TASK
    if args[:1] == ["--task"]:
        task, args = args[1], args[2:]
    for n in args or list(MUTATIONS):
        r = run(n, task)
        print(f"{r[0]:20s} {r[3]:8s} {r[4]:32s} {r[5]:5.0f} s   {r[2]}: {r[1]}", flush=True)
