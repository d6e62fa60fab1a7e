"""The Maven route (issue 13 item 3, docs/packaging.md "Maven"): the generator library's POM carries
what a public Maven repository requires; README.md's Maven example (`mvn install`, then the
separate project examples/chisel-downstream that depends on org.xlat:xlat) runs as written; the
installed artifact has its sources and Scaladoc jars; the downstream design's ports are exactly
the two blocks' ports as xlat's own generator lists them (babelfish_l1 and walker_rv39's
manifests, under the prefixes tlb_ / walker_), and it lints clean with the waivers the jar ships (and the example's own one)."""
import fcntl
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from xlat_tb.verilator import verilator_env

ROOT = Path(__file__).resolve().parents[2]
RTL = ROOT / "build" / "rtl"
POM = ROOT / "rtl" / "pom.xml"
NS = {"m": "http://maven.apache.org/POM/4.0.0"}
README = (ROOT / "README.md").read_text()
EXAMPLE = dict(re.findall(r"<!-- integrate:(\w+) -->\n```sh\n(.*?)```", README, re.S))["maven"]
DOWNSTREAM_OUT = ROOT / "build" / "examples" / "chisel-downstream" / "verilog"


def _pom(path=POM):
    return ET.parse(path).getroot()


def _text(root, path):
    e = root.find(path, NS)
    return None if e is None else (e.text or "").strip()


def _local_repo() -> Path:
    """Maven's local repository: ~/.m2/repository unless MAVEN_OPTS names another."""
    m = re.search(r"-Dmaven\.repo\.local=(\S+)", os.environ.get("MAVEN_OPTS", ""))
    return Path(m.group(1)) if m else Path.home() / ".m2" / "repository"


def test_pom_has_publication_metadata():
    """Maven Central's rules for a published POM: coordinates, name, description, url, a license,
    developers, scm; the license is the repository's LICENSE."""
    pom = _pom()
    for field in ["m:groupId", "m:artifactId", "m:version", "m:name", "m:description", "m:url",
                  "m:licenses/m:license/m:name", "m:licenses/m:license/m:url",
                  "m:developers/m:developer/m:name", "m:scm/m:url", "m:scm/m:connection"]:
        assert _text(pom, field), f"rtl/pom.xml has no {field}"
    assert _text(pom, "m:licenses/m:license/m:name") == "Apache License, Version 2.0"
    assert "Apache License" in (ROOT / "LICENSE").read_text().splitlines()[0] + \
        (ROOT / "LICENSE").read_text()[:200]
    # the sources and the Scaladoc jars are attached in the package phase
    plugins = {_text(p, "m:artifactId"): p for p in pom.findall("m:build/m:plugins/m:plugin", NS)}
    goals = {g.text for g in plugins["scala-maven-plugin"].iter(f"{{{NS['m']}}}goal")}
    assert "doc-jar" in goals
    assert "jar-no-fork" in {g.text for g in plugins["maven-source-plugin"].iter(f"{{{NS['m']}}}goal")}
    # the example's versions follow the library's (the Chisel plugin must match the Chisel xlat uses)
    ex = _pom(ROOT / "examples" / "chisel-downstream" / "pom.xml")
    for prop in ["scala.compiler.version", "chisel.version"]:
        assert _text(ex, f"m:properties/m:{prop}") == _text(pom, f"m:properties/m:{prop}"), prop
    assert _text(ex, "m:properties/m:xlat.version") == _text(pom, "m:version")


def _ports(sv: str, module: str):
    """(name, direction, width) of `module`'s ports as firtool prints them (xlat.Emit.ports' rule)."""
    header = sv.split(f"module {module}(", 1)[1].split(");", 1)[0]
    out, d, w = [], None, 1
    for line in header.splitlines():
        m = re.match(r"^\s*(?:(input|output|inout)\s+(?:\[(\d+):0\]\s+)?)?(\w+)\s*,?\s*$", line)
        if m:
            if m.group(1):
                d, w = m.group(1), int(m.group(2)) + 1 if m.group(2) else 1
            out.append((m.group(3), d, w))
    return out


@pytest.mark.parametrize("scaladoc", [
    pytest.param(False, id="no_scaladoc"),
    pytest.param(True, id="scaladoc", marks=pytest.mark.extended)])
def test_maven_route(tmp_path, scaladoc):
    """README.md's Maven example as written, then its results. make test's case skips the
    Scaladoc jar (-Dxlat.scaladoc.skip=true through MAVEN_OPTS: about a minute of CPU); make
    soak's builds and checks it."""
    # the two cases install the same artifact and write the same folder: one at a time
    lock = ROOT / "build" / ".maven-route.lock"
    with open(lock, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        _maven_route(tmp_path, scaladoc)


def _maven_route(tmp_path, scaladoc):
    version = _text(_pom(), "m:version")
    art = _local_repo() / "org" / "xlat" / "xlat" / version
    shutil.rmtree(art, ignore_errors=True)          # what is checked below is this run's install
    env = dict(os.environ)
    if not scaladoc:
        env["MAVEN_OPTS"] = (env.get("MAVEN_OPTS", "") + " -Dxlat.scaladoc.skip=true").strip()
    r = subprocess.run(["bash", "-eu", "-o", "pipefail", "-c", EXAMPLE], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, f"README Maven route:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"

    jars = {k: art / f"xlat-{version}{k}.jar" for k in ["", "-sources"] + ["-javadoc"] * scaladoc}
    for k, j in jars.items():
        assert j.is_file(), f"mvn install left no {j.name}"
    assert scaladoc or not (art / f"xlat-{version}-javadoc.jar").exists()
    with zipfile.ZipFile(jars[""]) as z:
        names = set(z.namelist())
        assert {"xlat/waivers.vlt", "xlat/babelfish/BabelFishTlb.class", "xlat/Generate.class"} <= names
        assert z.read("xlat/waivers.vlt") == (ROOT / "rtl" / "lint" / "waivers.vlt").read_bytes()
        # the bindable checkers (docs/checkers.md), as in rtl/checkers/
        for sv in sorted((ROOT / "rtl" / "checkers").glob("*.sv")):
            assert z.read(f"xlat/checkers/{sv.name}") == sv.read_bytes(), sv.name
    with zipfile.ZipFile(jars["-sources"]) as z:
        assert "xlat/walker/NestedWalker.scala" in z.namelist()
    if scaladoc:
        with zipfile.ZipFile(jars["-javadoc"]) as z:
            assert any(n.endswith("BabelFishTlb.html") for n in z.namelist())
    installed = _pom(art / f"xlat-{version}.pom")
    assert _text(installed, "m:licenses/m:license/m:name") == "Apache License, Version 2.0"

    # the downstream design: its ports are the blocks' ports, as xlat's generator lists them
    top = (DOWNSTREAM_OUT / "MyMmu.sv").read_text()
    want = []
    for prefix, config in [("tlb", "babelfish_l1"), ("walker", "walker_rv39")]:
        m = json.loads((RTL / config / "manifest.json").read_text())
        want += [(f"{prefix}_{p['name']}", p["direction"], p["width"]) for p in m["ports"]
                 if p["name"] not in ("clock", "reset")]
    got = [p for p in _ports(top, "MyMmu") if p[0] not in ("clock", "reset")]
    assert sorted(got) == sorted(want)
    # (the blocks inside are not byte-identical to make's: firtool drops an inner module's
    # unused and constant ports, which a top's it keeps)
    assert {"BabelFishTlb.sv", "NestedWalker.sv"} <= {p.name for p in DOWNSTREAM_OUT.glob("*.sv")}
    # lint clean with the waivers the jar carries
    waivers = tmp_path / "waivers.vlt"
    with zipfile.ZipFile(jars[""]) as z:
        waivers.write_bytes(z.read("xlat/waivers.vlt"))
    files = sorted(p.name for p in DOWNSTREAM_OUT.glob("*.sv") if p.name != "MyMmu.sv") + ["MyMmu.sv"]
    own = ROOT / "examples" / "chisel-downstream" / "lint.vlt"     # the example's own waiver
    lint = subprocess.run(["verilator", "--lint-only", "-Wall", str(waivers), str(own), *files,
                           "--top-module", "MyMmu"],
                          cwd=DOWNSTREAM_OUT, env=verilator_env(), capture_output=True, text=True)
    assert lint.returncode == 0, lint.stderr[-3000:]
