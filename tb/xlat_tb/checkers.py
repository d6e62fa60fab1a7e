"""The bindable checkers of rtl/checkers/ (docs/checkers.md): which checker a block has, its
parameters from a configuration's manifest, and the two ways to attach it (a `bind` statement
for Verilator and commercial tools, an instantiation beside the block for Yosys, which has no
`bind`). Used by the tests of tb/checkers/ and formal/checkers/; a user does by hand what
``bind_text`` prints."""

from __future__ import annotations

from pathlib import Path

from .manifest import Manifest
from .paths import REPO

CHECKER_DIR = REPO / "rtl" / "checkers"
# the shared rule modules, then each block's checker (compile order)
COMMON = ["xlat_chk_rule.sv", "xlat_chk_channel.sv", "xlat_chk_latency.sv", "xlat_chk_ids.sv"]


def _bf(m: Manifest) -> dict:
    p, d = m.params, m.derived
    return {"VPN_BITS": p["vpnBits"], "PPN_BITS": p["ppnBits"], "PCID_BITS": p["pcidBits"],
            "CCID_BITS": p["ccidBits"], "PC_BITS": p["pcBits"], "PC_IDX_BITS": d["pcIdxBits"],
            "VMID_BITS": p["vmidBits"], "SHARING": int(p["sharing"]), "LATENCY": p["latency"]}


# Verilog module -> (checker module, parameters from the manifest, extra inputs {name: width})
CHECKERS = {
    "BabelFishTlb": ("babelfish_tlb_chk", _bf,
                     lambda m: {"sym_vpn": m.params["vpnBits"], "sym_pcid": m.params["pcidBits"],
                                "sym_ccid": m.params["ccidBits"]}),
}


def checker_of(m: Manifest) -> str:
    return CHECKERS[m.module][0]


def sources(m: Manifest) -> list[Path]:
    """The checker files a design with ``m``'s block needs, in compile order."""
    return [CHECKER_DIR / f for f in COMMON] + [CHECKER_DIR / f"{checker_of(m)}.sv"]


def params(m: Manifest, *, in_assume: int = 1, out_assume: int = 0) -> dict:
    name, fn, _ = CHECKERS[m.module]
    return {**fn(m), "IN_ASSUME": in_assume, "OUT_ASSUME": out_assume}


def _param_list(ps: dict) -> str:
    return ", ".join(f".{k}({v})" for k, v in ps.items())


def bind_text(m: Manifest, extra: dict[str, int] | None = None, *, target: str | None = None,
              instance: str = "xlat_chk", **modes) -> str:
    """A `bind` of ``m``'s checker into every instance of ``target`` (default: the block's
    module): ports by name (`.*`), the extra inputs (e.g. the symbolic context) as constants."""
    ps = params(m, **modes)
    widths = CHECKERS[m.module][2](m)
    conns = "".join(f", .{n}({widths[n]}'d{v})" for n, v in (extra or {}).items())
    return (f"bind {target or m.module} {checker_of(m)} #({_param_list(ps)})\n"
            f"  {instance} (.*{conns});\n")


def instance_text(m: Manifest, connect: dict[str, str], *, instance: str = "xlat_chk",
                  **modes) -> str:
    """The same checker instantiated beside the block, every port connected as ``connect``
    maps the checker's port names to the user's signals (Yosys: no `bind`)."""
    ps = params(m, **modes)
    body = ",\n".join(f"    .{p}({s})" for p, s in connect.items())
    return f"  {checker_of(m)} #({_param_list(ps)}) {instance} (\n{body}\n  );\n"
