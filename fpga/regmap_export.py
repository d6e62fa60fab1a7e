"""IP-XACT register maps from the SystemRDL that xlat.Generate writes (docs/packaging.md,
"Register maps"): every `<config>.rdl` under the generator's output is compiled with
systemrdl-compiler and exported with peakrdl-ipxact to `<config>.ipxact.xml` beside it, so the
SystemRDL and the IP-XACT both come from the block's one Scala register map.

    python fpga/regmap_export.py [build/rtl]      (make runs it after generating)
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from peakrdl_ipxact import IPXACTExporter
from systemrdl import RDLCompiler


def compile_rdl(path: Path):
    """The elaborated root of one SystemRDL file (raises on any error the compiler reports)."""
    rdlc = RDLCompiler()
    rdlc.compile_file(str(path))
    return rdlc.elaborate()


def export(path: Path) -> Path:
    """`<config>.ipxact.xml` beside `<config>.rdl`, versioned as the configuration's manifest."""
    root = compile_rdl(path)
    version = json.loads((path.parent / "manifest.json").read_text())["version"]
    out = path.with_suffix(".ipxact.xml")
    IPXACTExporter(vendor="xlat", library="ip", version=version).export(root.top, str(out))
    return out


def main(argv: list[str]) -> int:
    rtl = Path(argv[1]) if len(argv) > 1 else Path("build/rtl")
    files = sorted(rtl.glob("*/*.rdl"))
    for f in files:
        export(f)
    print(f"regmap_export: {len(files)} SystemRDL maps compiled, IP-XACT written beside them")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
