"""Planted mutations for formal/babelfish (README.md, "Mutations"): each edits one expression of a
scratch copy of the generated BabelFishTlb.sv of a formal configuration (never the repository)
and runs one task of babelfish.sby on it; prints the sby status, the phase that failed and the
failed assertions' lines in babelfish_tlb_fv.sv (formal/mutation.py runs it).

    .venv/bin/python formal/babelfish/mutate.py [--bmc N] [name ...]     # all when no name
--bmc N runs the task's assertions as a bounded check from reset to depth N instead of the
proof (mode bmc): a failure the proof finds only in its induction step (status UNKNOWN, which
fails the task) is then shown to be a real trace from reset.
The RTL comes from build/formal/rtl/<config>/ (formal/test_formal.py generates the test-only
configurations there: run `pytest formal -k prove_vmid` once first). Work directories:
build/formal/mut/babelfish_<name>/.
"""
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from mutation import OUT, ROOT, plant, run_sby  # noqa: E402

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


def run(name, bmc=None):
    what, config, task, old, new = MUTATIONS[name]
    work = OUT / (f"babelfish_{name}" if bmc is None else f"babelfish_{name}_bmc{bmc}")
    if not plant(work, ROOT / "build" / "formal" / "rtl" / config, "BabelFishTlb.sv", old, new):
        return name, what, "NOT-APPLIED", "", 0
    sby = re.sub(r"rtl \.\./\.\./build/(formal/)?rtl/" + config + r"\n", "rtl rtl\n",
                 (HERE / "babelfish.sby").read_text())
    if bmc is not None:
        sby = sby.replace("prove: mode prove\nprove: depth 10\n", f"prove: mode bmc\nprove: depth {bmc}\n")
    status, where, dt = run_sby(work, HERE, ["babelfish_tlb_fv.sv"], sby, task, "babelfish_tlb_fv.sv")
    return name, what, status, where, dt


if __name__ == "__main__":
    args, bmc = sys.argv[1:], None
    if args[:1] == ["--bmc"]:
        bmc, args = int(args[1]), args[2:]
    for n in args or list(MUTATIONS):
        r = run(n, bmc)
        print(f"{r[0]:20s} {r[2]:8s} {r[3]:36s} {r[4]:5.0f} s   {r[1]}", flush=True)
