"""Planted mutations of the TLB RTL for formal/checkers (README.md, "Mutations of the block"):
each edits one expression of a scratch copy of the instruction TLB (build/formal/rtl/
babelfish_formal_itlb, which formal/test_formal.py generates: run `pytest formal -k chk_prove`
once first) and runs `chk_bmc` (both sides of the checkers asserted) on split_tlb over it: the
checker must catch a block that breaks its port contract. formal/mutation.py does the work;
work directories: build/formal/mut/checkers_<name>/.

    .venv/bin/python formal/checkers/mutate.py [name ...]     # all when no name
"""
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from mutation import OUT, ROOT, plant, run_sby  # noqa: E402

RTL = ROOT / "build" / "formal" / "rtl"
# name -> (what it breaks, sby task, exact text in itlb_BabelFishTlb.sv, replacement)
MUTATIONS = {
    "match_ignores_ccid": (
        "way 0 of the 4 KiB array matches a lookup whatever its CCID (private and shared entries "
        "of another group answer)",
        "chk_bmc",
        "wire        hitsC_sameCcid = _pages_io_readData_0_ccid == b_r_bits_REG_lookup_ccid;",
        "wire        hitsC_sameCcid = 1'b1;"),
    "latency_short": (
        "the response leaves a cycle early (the response register bypassed for `valid`)",
        "chk_bmc", "assign lookup_resp_valid = lookup_resp_valid_REG;",
        "assign lookup_resp_valid = lookupNow;"),
}


def run(name):
    what, task, old, new = MUTATIONS[name]
    work = OUT / f"checkers_{name}"
    if not plant(work, RTL / "babelfish_formal_itlb", "itlb_BabelFishTlb.sv", old, new):
        return name, what, "NOT-APPLIED", "", 0
    sby = (HERE / "checkers.sby").read_text()
    sby = re.sub(r"rtl_i \S+\n", "rtl_i rtl\n", sby)
    sby = re.sub(r"rtl_d \S+\n", f"rtl_d {RTL / 'babelfish_formal_dtlb'}\n", sby)
    sby = sby.replace("../../rtl/checkers/", f"{ROOT / 'rtl' / 'checkers'}/")
    status, where, dt = run_sby(work, HERE, ["split_tlb.sv", "split_tlb_fv.sv"], sby, task,
                                "xlat_chk_rule.sv")
    rules = sorted(set(re.findall(r"failed assertion (\S+?)\._witness_",
                                  (work / "sby.log").read_text())))
    return name, what, status, f"{where} {' '.join(rules)}", dt


if __name__ == "__main__":
    for n in sys.argv[1:] or list(MUTATIONS):
        r = run(n)
        print(f"{r[0]:20s} {r[2]:8s} {r[3]:60s} {r[4]:5.0f} s   {r[1]}", flush=True)
