"""README.md "Integrate it": every route's example runs as written (issue 13 item 6).  An example
is the ```sh block after a `<!-- integrate:<route> -->` marker, run by bash -eu from the checkout
with the venv's tools first on PATH, as after `make`."""
import os
import re
import subprocess
from pathlib import Path

import pytest

from xlat_tb.verilator import verilator_env

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = ROOT / ".venv" / "bin"
README = (ROOT / "README.md").read_text()
ROUTES = dict(re.findall(r"<!-- integrate:(\w+) -->\n```sh\n(.*?)```", README, re.S))


# the Maven route runs in test_maven.py, which also checks what it installs and emits
SEPARATE = {"maven"}


def test_every_route_has_an_example():
    assert {"verilog", "fusesoc", "axi", "maven", "checkers"} <= set(ROUTES), sorted(ROUTES)


@pytest.mark.parametrize("route", sorted(set(ROUTES) - SEPARATE))
def test_route_example_runs(route):
    env = verilator_env()
    env["PATH"] = f"{VENV_BIN}:{env['PATH']}"          # FuseSoC and Python of the venv
    r = subprocess.run(["bash", "-eu", "-o", "pipefail", "-c", ROUTES[route]], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"README route {route}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
