"""Write mmu_ports.svh (mmu_formal): a wire for every output port of the configuration's XlatMmu
(the dbg_* ports included) and the instance `dut` connecting every port by name (the inputs are
mmu_fv.sv's free wires of the same names). Run after a port change:
    python3 formal/mmu/gen_ports.py
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from ports import write  # noqa: E402

BUILD = HERE.parent.parent / "build"
RTL = BUILD / "rtl" / "mmu_formal"

if (RTL / "XlatMmu.sv").exists():
    write(HERE / "mmu_ports.svh", RTL / "XlatMmu.sv", "XlatMmu", BUILD.parent, "gen_ports.py")
else:
    print(f"mmu_ports.svh: {RTL} missing (make)")
