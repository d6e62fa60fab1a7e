"""make soak: the extended tier, then the random tests at the issue floors with fresh seeds
(tb/README.md, "Tiers" and "Seeds").

    python tb/soak.py [--seeds N] [--jobs J] [-k EXPR] [--no-extended]

First (unless --no-extended) one pytest session runs every case marked ``extended`` (the
test-only configurations' testbenches, the proofs of parameter variants: what `make test`
leaves out to stay within its budget) with their `make test` lengths and seeds.

For each of N fresh seeds (printed first) one pytest session runs the selected cases (default
every ``test_random``) with XLAT_SEED set to it and every random-test length at its floor
(xlat_tb.regression.LENGTHS: babelfish 20,000 operations, walker 10,000 walks, pml 100,000
events per configuration).  A failing case prints the command that reproduces it and the line
to add to tb/<block>/seeds.txt, so that `make test` replays it from then on.  Exit status 1
when any case failed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from xlat_tb.paths import BUILD, REPO  # noqa: E402
from xlat_tb.regression import LENGTHS  # noqa: E402
from xlat_tb.seed import ENV, fresh_seed  # noqa: E402


def failures(xml: Path) -> list[str]:
    """pytest node ids of the failed cases in a junit XML report."""
    if not xml.is_file():
        return []
    out = []
    for tc in ET.parse(xml).getroot().iter("testcase"):
        if tc.find("failure") is not None or tc.find("error") is not None:
            f = tc.get("file") or tc.get("classname", "").replace(".", "/") + ".py"
            out.append(f"{f}::{tc.get('name')}")
    return out


def seed_line(node: str, seed: int, floors: dict) -> tuple[Path, str]:
    """(seeds.txt of the block, the line that replays ``node`` with ``seed``)."""
    block = node.split("/")[1]
    cfg, _, test = node.split("[", 1)[1].rstrip("]").rpartition("-")
    length = floors[LENGTHS[block][0]] if block in LENGTHS and test == "test_random" else "-"
    return REPO / "tb" / block / "seeds.txt", f"{cfg:<13} {test:<13} {seed:<12} {length:<8} # "


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=1, help="fresh seeds (default 1)")
    ap.add_argument("--jobs", type=int, default=2, help="pytest-xdist workers (default 2)")
    ap.add_argument("-k", default="test_random", help="pytest -k selection (default test_random)")
    ap.add_argument("--no-extended", action="store_true",
                    help="skip the extended tier (only the fresh-seed random runs)")
    ap.add_argument("--short", action="store_true",
                    help="the `make test` lengths instead of the floors (a quick sweep)")
    a = ap.parse_args()
    seeds = [fresh_seed() for _ in range(a.seeds)]
    floors = {var: str(short if a.short else floor) for var, short, floor in LENGTHS.values()}
    print(f"[soak] {len(seeds)} fresh seed(s): {' '.join(map(str, seeds))}", flush=True)
    print(f"[soak] lengths: {' '.join(f'{k}={v}' for k, v in floors.items())}; -k '{a.k}'",
          flush=True)
    out = BUILD / "soak"
    out.mkdir(parents=True, exist_ok=True)
    failed: list[tuple[int, str]] = []
    t_all = time.monotonic()
    if not a.no_extended:
        xml = out / "extended.xml"
        env = dict(os.environ, XLAT_EXTENDED="1")
        cmd = [sys.executable, "-m", "pytest", "-n", str(a.jobs), "--dist", "loadgroup", "-q",
               "-p", "no:cacheprovider", "tb", "formal", "sim", "-m", "extended",
               f"--junitxml={xml}"]
        t0 = time.monotonic()
        rc = subprocess.run(cmd, cwd=REPO, env=env).returncode
        bad = failures(xml) or ([f"(pytest exit {rc}: no failed case in {xml})"] if rc else [])
        print(f"[soak] extended tier: {len(bad)} failed, {time.monotonic() - t0:.0f} s", flush=True)
        failed += [(0, b) for b in bad]
    for n, seed in enumerate(seeds, 1):
        xml = out / f"seed_{seed}.xml"
        env = dict(os.environ, **floors, **{ENV: str(seed), "XLAT_NO_RERUN": "1",
                                            "XLAT_EXTENDED": "1"})
        cmd = [sys.executable, "-m", "pytest", "-n", str(a.jobs), "-q", "-p", "no:cacheprovider",
               "tb", "-k", a.k, f"--junitxml={xml}"]
        t0 = time.monotonic()
        rc = subprocess.run(cmd, cwd=REPO, env=env).returncode
        bad = failures(xml)
        if rc and not bad:
            bad = [f"(pytest exit {rc}: no failed case in {xml})"]
        print(f"[soak] seed {seed} ({n}/{len(seeds)}): {len(bad)} failed, "
              f"{time.monotonic() - t0:.0f} s", flush=True)
        failed += [(seed, b) for b in bad]
    print(f"[soak] {len(seeds)} seed(s) in {time.monotonic() - t_all:.0f} s: "
          f"{len(failed)} failed case(s)", flush=True)
    for seed, node in failed:
        if seed == 0:
            print(f"[soak] FAILED (extended tier, make test's seed) {node}\n"
                  f"  reproduce: XLAT_EXTENDED=1 .venv/bin/python -m pytest '{node}'")
            continue
        if node.startswith("("):
            print(f"[soak] seed {seed}: {node}")
            continue
        path, line = seed_line(node, seed, floors)
        block = node.split("/")[1]
        var = LENGTHS[block][0] if block in LENGTHS else None
        lens = f"{var}={floors[var]} " if var else ""
        print(f"[soak] FAILED {node} (seed {seed})\n"
              f"  reproduce: {ENV}={seed} {lens}.venv/bin/python -m pytest '{node}'\n"
              f"  then add to {path.relative_to(REPO)} (with what it found):\n    {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
