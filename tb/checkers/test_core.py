"""The FuseSoC core of the checkers (rtl/checkers/xlat_checkers.core, docs/checkers.md) lists
every checker file, the shared rule modules first, with the generator's version."""

import re

import yaml

from xlat_tb import checkers
from xlat_tb.paths import REPO


def test_checkers_core():
    core = checkers.CHECKER_DIR / "xlat_checkers.core"
    text = core.read_text()
    assert text.startswith("CAPI=2:")
    doc = yaml.safe_load(text)
    pom = (REPO / "rtl" / "pom.xml").read_text()
    version = re.search(r"<artifactId>xlat</artifactId>\s*<version>([^<]+)</version>", pom).group(1)
    assert doc["name"] == f"xlat:ip:checkers:{version}"
    files = doc["filesets"]["checkers"]["files"]
    assert files[:len(checkers.COMMON)] == checkers.COMMON
    assert sorted(files) == sorted(p.name for p in checkers.CHECKER_DIR.glob("*.sv"))
    assert sorted(files[len(checkers.COMMON):]) == sorted(
        f"{m}.sv" for m, *_ in checkers.CHECKERS.values())
