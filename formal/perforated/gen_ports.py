"""Write perforated_ports.svh (perforated_formal) and perforated_sets_ports.svh
(perforated_formal_sets, the test-only configuration of the set-associative bitmap cache that
formal/test_formal.py generates under build/formal/rtl/): a wire for every output port of the
configuration's PerforatedL2Tlb and the instance `dut` connecting every port by name (the inputs
are the wrapper's free wires of the same names). Run after a port change:
    python3 formal/perforated/gen_ports.py
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from ports import write  # noqa: E402

BUILD = HERE.parent.parent / "build"
TARGETS = [("perforated_ports.svh", BUILD / "rtl" / "perforated_formal"),
           ("perforated_sets_ports.svh", BUILD / "formal" / "rtl" / "perforated_formal_sets")]

for name, rtl in TARGETS:
    if (rtl / "PerforatedL2Tlb.sv").exists():
        write(HERE / name, rtl / "PerforatedL2Tlb.sv", "PerforatedL2Tlb", BUILD.parent, "gen_ports.py")
    else:
        print(f"{name}: {rtl} missing (make; the sets configuration: pytest formal -k perforated_sets)")
