"""Repository and build locations (generated files never go into the source tree)."""

from pathlib import Path

TB_DIR = Path(__file__).resolve().parent.parent
REPO = TB_DIR.parent
BUILD = REPO / "build"
RTL_BUILD = BUILD / "rtl"
SIM_BUILD = BUILD / "sim"
