"""Test-only configurations: run the project's generator (xlat.Generate, as `make custom` does)
for parameter sets that no named configuration covers, into build/sim/rtl_tb/<name>/.

They live outside build/rtl/ on purpose: `make lint` and the generator tests iterate over every
directory of build/rtl/, and these configurations are the testbench's business only.
A configuration is regenerated when its manifest is missing, its parameters differ, or the
generator's classes are newer than it.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

from .paths import BUILD, SIM_BUILD

TB_RTL = SIM_BUILD / "rtl_tb"
# The JVM options of the tests' generator runs: the C1 compiler only. A run is seconds long, and
# C2's compiler threads cost more CPU than they save (tb/generator's batch of command lines:
# 35 -> 24 CPU seconds, 2026-11-30).
JAVA_FLAGS = ["-XX:TieredStopAtLevel=1"]


def _newest_mtime(root: Path) -> float:
    newest = 0.0
    for dirpath, _, files in os.walk(root):
        for f in files:
            try:
                newest = max(newest, os.stat(os.path.join(dirpath, f)).st_mtime)
            except OSError:
                pass
    return newest


def skip_missing(reason: str):
    """Skip, or fail under `make test` / `make soak` (XLAT_REQUIRE_BUILD=1): there `make` has
    just built everything, so a missing build product is a broken build, not a reason to pass
    a whole configuration quietly."""
    import pytest

    if os.environ.get("XLAT_REQUIRE_BUILD") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def ensure_config(block: str, name: str, params: dict) -> Path:
    """Generate ``name`` (block ``block``, ``params`` over the defaults) if needed; return the
    path of its manifest.json.  Skips the calling test (with the reason) when the generator
    has not been built (run `make` first)."""
    classes = BUILD / "maven" / "classes"
    cpfile = BUILD / "classpath.txt"
    java = shutil.which("java")
    if not (classes.is_dir() and cpfile.is_file() and java):
        skip_missing(f"test-only configuration {name} needs the generator (build/maven/classes, "
              f"build/classpath.txt, java): run `make` first")
    out = TB_RTL / name
    man = out / "manifest.json"
    TB_RTL.mkdir(parents=True, exist_ok=True)
    with open(TB_RTL / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        fresh = False
        if man.is_file():
            try:
                have = json.loads(man.read_text())["params"]
                same = all(str(have.get(k)).lower() == str(v).lower() for k, v in params.items())
                fresh = same and man.stat().st_mtime >= _newest_mtime(classes)
            except (OSError, ValueError, KeyError):
                fresh = False
        if not fresh:
            cp = f"{classes}:{cpfile.read_text().strip()}"
            args = [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in params.items()]
            cmd = [java, *JAVA_FLAGS, "-cp", cp, "xlat.Generate", "--out", str(TB_RTL), "--block", block,
                   "--name", name, *args]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            if r.returncode != 0 or not man.is_file():
                import pytest

                pytest.fail(f"generating test-only configuration {name} failed:\n  {' '.join(cmd)}"
                            f"\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}", pytrace=False)
            print(f"[xlat] generated test-only configuration {name}: {r.stdout.strip()}")
    return man
