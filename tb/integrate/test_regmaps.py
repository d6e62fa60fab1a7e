"""Register maps exported from their one Scala source (issue 13 item 4; docs/packaging.md,
"Register maps"): each PmlLogger and XlatMmu configuration's `<config>.rdl` compiles with
systemrdl-compiler and describes exactly the manifest's map (which the RTL decodes from the
same source), PmlLogger's also the independent table of the reference model
(`models.pml.default_registers`, written from docs/pml-logger.md); the IP-XACT beside it
is the export of that compiled map."""
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RTL = ROOT / "build" / "rtl"
sys.path.insert(0, str(ROOT / "fpga"))
from regmap_export import compile_rdl  # noqa: E402

from models.pml import PmlParams, default_registers  # noqa: E402

CONFIGS = sorted(p.name for p in RTL.glob("*") if (p / "manifest.json").exists()
                 and json.loads((p / "manifest.json").read_text())["block"] in ("pml", "mmu")) if RTL.exists() else []
SW = {"rw": "rw", "ro": "r", "wo": "w"}


def _regs(node) -> list[dict]:
    """The registers directly under `node`: name, offset, software access, reset, fields."""
    out = []
    for r in node.registers():
        fields = sorted(r.fields(), key=lambda f: f.low)
        sw = {f.get_property("sw").name for f in fields}
        assert len(sw) == 1, (r.inst_name, sw)
        out.append({
            "name": r.inst_name, "offset": r.raw_address_offset, "access": sw.pop(),
            "reset": sum((f.get_property("reset") or 0) << f.low for f in fields),
            "fields": [{"name": f.inst_name, "lsb": f.low, "width": f.width} for f in fields],
            "width": r.get_property("regwidth"),
        })
    return out


def _expected(regs: list[dict]) -> list[dict]:
    return [{"name": r["name"], "offset": r["offset"], "access": SW[r["access"]], "reset": int(r.get("reset", 0)),
             "fields": r["fields"], "width": 64} for r in regs]


def _ctx(top):
    arrays = [c for c in top.children() if c.inst_name == "ctx"]
    assert len(arrays) == 1
    return arrays[0]


def test_there_are_maps():
    assert {"pml_default", "mmu_rv"} <= set(CONFIGS)


@pytest.mark.parametrize("config", CONFIGS)
def test_systemrdl_is_the_manifest_map(config):
    d = RTL / config
    m = json.loads((d / "manifest.json").read_text())
    top = compile_rdl(d / f"{config}.rdl").top
    assert top.inst_name == f"xlat_{m['block']}_{config}"
    ctx = _ctx(top)
    contexts = m["params"]["contexts"] if m["block"] == "pml" else m["params"]["pmlContexts"]
    assert ctx.array_dimensions == [contexts] and ctx.array_stride == 0x80
    pml = m["registers"] if m["block"] == "pml" else m["pmlRegisters"]
    assert _regs(ctx) == _expected(pml)
    if m["block"] == "mmu":
        assert _regs(top) == _expected(m["registers"])
        ctrl = next(r for r in m["registers"] if r["name"] == "CTRL")
        assert (ctrl["offset"], ctrl["reset"]) == (0x8000, 3)        # docs/xlat-mmu.md, decided 8
    else:
        assert not list(top.registers())


@pytest.mark.parametrize("config", [c for c in CONFIGS if c.startswith("pml_")])
def test_pml_map_is_the_models(config):
    """The exported PmlLogger map against the reference model's own register table."""
    m = json.loads((RTL / config / "manifest.json").read_text())
    p = PmlParams(**{k: v for k, v in m["params"].items() if k in PmlParams.__dataclass_fields__})
    got = _regs(_ctx(compile_rdl(RTL / config / f"{config}.rdl").top))
    want = [{"name": r["name"], "offset": r["offset"], "access": SW[r["access"]], "fields": r["fields"]}
            for r in default_registers(p)]
    assert [{k: r[k] for k in ("name", "offset", "access", "fields")} for r in got] == want


@pytest.mark.parametrize("config", CONFIGS)
def test_ipxact_holds_every_register(config):
    d = RTL / config
    m = json.loads((d / "manifest.json").read_text())
    root = ET.parse(d / f"{config}.ipxact.xml").getroot()
    ns = {"ipxact": root.tag[1:].split("}")[0]}
    assert root.find("ipxact:vendor", ns).text == "xlat"
    assert root.find("ipxact:version", ns).text == m["version"]
    names = {e.text for e in root.iterfind(".//ipxact:register/ipxact:name", ns)}
    want = {r["name"] for r in m.get("pmlRegisters", m["registers"])}
    if m["block"] == "mmu":
        want |= {r["name"] for r in m["registers"]}
    assert want <= names, sorted(want - names)
