"""Planted mutations for formal/devtlb (README.md, "Mutations"): each edits one expression of a
scratch copy of build/rtl/devtlb_formal/DevTlb.sv (never the repository) and runs the
devtlb_prove task on it; prints the sby status, the phase that failed and the failed
assertions' lines in devtlb_fv.sv. The same scheme as formal/perforated/mutate.py.

    .venv/bin/python formal/devtlb/mutate.py [--task devtlb_bmc] [name ...]   # all when no name
Work directories: build/formal/mut/devtlb_<name>/ (devtlb_<name>_bmc with --task devtlb_bmc: the
same mutation run as a bounded check from reset, to show that a failure the proof finds only in
its induction step is a real trace from reset).
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from mutation import OUT, ROOT, plant, run_sby  # noqa: E402

RTL = ROOT / "build" / "rtl" / "devtlb_formal"
TASK = "devtlb_prove"

# name -> (what it breaks, exact text in DevTlb.sv, replacement)
MUTATIONS = {
    "comp_wrong_waiter": (
        "a completion of slot k makes waiter 0 ready when it waits for slot k ^ 1 (the wrong "
        "slot's, so another SID's, waiter)",
        "compNow & wValid_0 & waiter_0_slot == s_r_bits_REG_comp_tag",
        "compNow & wValid_0 & waiter_0_slot == (s_r_bits_REG_comp_tag ^ 2'h1)"),
    "slot_freed_early": (
        "slot 0 freed at its first waiter's response while others still wait",
        "drained & ~_GEN_21 & slot_0_waiters == 3'h1 | _GEN_11",
        "drained & ~_GEN_21 | _GEN_11"),
    "copy_overwritten": (
        "waiter 0's response copy reloaded by later completions after it is ready",
        "    if (waiter_0_ready) begin",
        "    if (1'b0) begin"),
    "drain_twice": (
        "the waiter in the response register can be picked again (answered twice)",
        "wire        readyVec_0 = wValid_0 & waiter_0_ready & ~outOH_0 & ~pickOH_0;",
        "wire        readyVec_0 = wValid_0 & waiter_0_ready & ~pickOH_0;"),
    "pb_ignores_sid": (
        "PB entry 0 hits without its SID compare",
        "pbValid_0 & _pb_io_readData_0_sid == c_r_bits_REG_req_sid",
        "pbValid_0"),
    "no_claim": (
        "a fill into a row of another SID's PTag never claims the row",
        "cmClaim <= ~claimRow_REG_1;",
        "cmClaim <= 1'b0;"),
    "merge_misses_ahead": (
        "the merge check ignores the demand slot allocated by the request just ahead",
        "(mergeOH_lastValid_0 & mergeOH_sameAhead ? mergeOH_last_0_oh : 4'h0)",
        "4'h0"),
    "unsent_completion": (
        "a completion for slot 0 accepted before its ATS request was sent",
        "valid_0 & slot_0_sent & ~slot_0_completing",
        "valid_0 & ~slot_0_completing"),
    "no_waiter_room": (
        "a request accepted without a free waiter (the last case of the acceptance rule)",
        ": (|demandFree) & (|waitFree))",
        ": (|demandFree))"),
}


def run(name, task=TASK):
    what, old, new = MUTATIONS[name]
    work = OUT / (f"devtlb_{name}" if task == TASK else f"devtlb_{name}_{task.split('_')[-1]}")
    if not plant(work, RTL, "DevTlb.sv", old, new):
        return name, what, "NOT-APPLIED", "", 0
    sby = (HERE / "devtlb.sby").read_text().replace("rtl ../../build/rtl/devtlb_formal", "rtl rtl")
    status, where, dt = run_sby(work, HERE, ["devtlb_fv.sv"], sby, task, "devtlb_fv.sv")
    return name, what, status, where, dt


if __name__ == "__main__":
    args = sys.argv[1:]
    task = TASK
    if args[:1] == ["--task"]:
        task, args = args[1], args[2:]
    names = args or list(MUTATIONS)
    for n in names:
        r = run(n, task)
        print(f"{r[0]:20s} {r[2]:8s} {r[3]:36s} {r[4]:5.0f} s   {r[1]}", flush=True)
