"""pytest glue for tb/: makes `models`, `xlat_tb` and the per-block packages importable."""

import os
import sys

_TB = os.path.dirname(os.path.abspath(__file__))
if _TB not in sys.path:
    sys.path.insert(0, _TB)
