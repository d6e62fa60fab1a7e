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
COMMON = ["xlat_chk_rule.sv", "xlat_chk_channel.sv", "xlat_chk_latency.sv", "xlat_chk_ids.sv",
          "xlat_chk_reqresp.sv", "xlat_chk_mem.sv", "xlat_chk_pml_io.sv"]


def _bf(m: Manifest) -> dict:
    p, d = m.params, m.derived
    return {"VPN_BITS": p["vpnBits"], "PPN_BITS": p["ppnBits"], "PCID_BITS": p["pcidBits"],
            "CCID_BITS": p["ccidBits"], "PC_BITS": p["pcBits"], "PC_IDX_BITS": d["pcIdxBits"],
            "VMID_BITS": p["vmidBits"], "SHARING": int(p["sharing"]), "LATENCY": p["latency"]}


def _fields(m: Manifest, channel: str, but: tuple[str, ...] = ()) -> list[str]:
    """The ``<channel>_bits_*`` ports of ``m`` but ``but``, in manifest order."""
    return [f"{channel}_bits_{f}" for f in m.channel_fields(channel) if f not in but]


# Per checker: (module, parameters from port widths {param: port}, payload inputs
# {checker port: (channel, fields left out)}, other parameters from the manifest)
_MEM = {"MID_BITS": "mem_req_bits_id", "ADDR_BITS": "mem_req_bits_addr"}
CHECKERS = {
    "BabelFishTlb": ("babelfish_tlb_chk", {}, {}, _bf),
    "NestedWalker": ("nested_walker_chk", {"ID_BITS": "req_bits_id", **_MEM},
                     {"req_payload": ("req", ("id",)), "resp_payload": ("resp", ("id",)),
                      "dirty_payload": ("dirty", ()), "flush_payload": ("flush", ())}, None),
    "PmlLogger": ("pml_logger_chk", dict(_MEM),
                  {"dirty_payload": ("dirty", ()), "exit_payload": ("exit", ()),
                   "guestIrq_payload": ("guestIrq", ())}, None),
    "DevTlb": ("devtlb_chk", {"TAG_BITS": "req_bits_tag", "ATS_TAG_BITS": "ats_req_bits_tag"},
               {"req_payload": ("req", ("tag",)), "resp_payload": ("resp", ("tag",)),
                "ats_req_payload": ("ats_req", ("tag",)),
                "ats_resp_payload": ("ats_resp", ("tag",)), "inval_payload": ("inval", ())},
               None),
    "PerforatedL2Tlb": ("perforated_l2tlb_chk", {"ID_BITS": "req_bits_id", **_MEM},
                        {"req_payload": ("req", ("id",)), "resp_payload": ("resp", ("id",)),
                         "inval_payload": ("inval", ())}, None),
    "XlatMmu": ("xlat_mmu_chk", {"ID_BITS": "req_bits_id", **_MEM},
                {"req_payload": ("req", ("id",)), "resp_payload": ("resp", ("id",)),
                 "fence_payload": ("fence", ()), "exit_payload": ("exit", ()),
                 "guestIrq_payload": ("guestIrq", ())}, None),
}
# the width parameter of each payload input: REQ_BITS for req_payload, ...
_PAYLOAD_PARAM = {"req_payload": "REQ_BITS", "resp_payload": "RESP_BITS",
                  "dirty_payload": "DIRTY_BITS", "flush_payload": "FLUSH_BITS",
                  "exit_payload": "EXIT_BITS", "guestIrq_payload": "IRQ_BITS",
                  "ats_req_payload": "ATS_REQ_BITS", "ats_resp_payload": "ATS_RESP_BITS",
                  "inval_payload": "INVAL_BITS", "fence_payload": "FENCE_BITS"}
# the tracked context and page of BabelFishTlb's isolation rule: {input: manifest param}
SYM_INPUTS = {"BabelFishTlb": {"sym_sel_vpn": "vpnBits", "sym_sel_pcid": "pcidBits",
                               "sym_sel_ccid": "ccidBits"}}


def payloads(m: Manifest) -> dict[str, list[str]]:
    """{checker input: the block's ports it concatenates, MSB first}."""
    return {k: _fields(m, ch, but) for k, (ch, but) in CHECKERS[m.module][2].items()}


def checker_of(m: Manifest) -> str:
    return CHECKERS[m.module][0]


def sources(m: Manifest) -> list[Path]:
    """The checker files a design with ``m``'s block needs, in compile order."""
    return [CHECKER_DIR / f for f in COMMON] + [CHECKER_DIR / f"{checker_of(m)}.sv"]


def params(m: Manifest, *, in_assume: int = 1, out_assume: int = 0, more: dict | None = None) -> dict:
    """The checker's parameters for ``m``'s configuration (IN_ASSUME / OUT_ASSUME: the sides;
    ``more``: other parameters, e.g. BabelFishTlb's SYM_FROM_FILL)."""
    _, widths, _, other = CHECKERS[m.module]
    ps = {k: m.width(port) for k, port in widths.items()}
    for k, ports in payloads(m).items():
        ps[_PAYLOAD_PARAM[k]] = sum(m.width(p) for p in ports)
    if other is not None:
        ps.update(other(m))
    return {**ps, **(more or {}), "IN_ASSUME": in_assume, "OUT_ASSUME": out_assume}


def _param_list(ps: dict) -> str:
    return ", ".join(f".{k}({v})" for k, v in ps.items())


def bind_text(m: Manifest, sym: dict[str, int] | None = None, *, target: str | None = None,
              instance: str = "xlat_chk", **modes) -> str:
    """A `bind` of ``m``'s checker into every instance of ``target`` (default: the block's
    module): ports of the same name by `.*`, each payload input as the concatenation of its
    channel's fields, the tracked context (``sym``, BabelFishTlb; 0 where not given) as
    constants."""
    ps = params(m, **modes)
    conns = [f".{k}({{{', '.join(v)}}})" for k, v in payloads(m).items()]
    widths = {k: m.params[p] for k, p in SYM_INPUTS.get(m.module, {}).items()}
    sym = {n: (sym or {}).get(n, 0) for n in widths}     # a constant S (default 0)
    conns += [f".{n}({widths[n]}'d{v})" for n, v in sym.items()]
    tail = "".join(",\n    " + c for c in conns)
    return (f"bind {target or m.module} {checker_of(m)} #({_param_list(ps)})\n"
            f"  {instance} (.*{tail});\n")


def instance_text(m: Manifest, prefix: str = "", sym: dict[str, str] | None = None, *,
                  instance: str = "xlat_chk", **modes) -> str:
    """The same checker instantiated beside the block (Yosys has no `bind`): every port
    connected to the user's signal named ``prefix`` + the block's port name (clock and reset
    as they are); ``sym`` maps the
    tracked context's inputs to the user's signals."""
    ps = params(m, **modes)
    pays = payloads(m)
    names = _checker_ports(m)
    conns = []
    for n in names:
        if n in pays:
            conns.append(f".{n}({{{', '.join(prefix + p for p in pays[n])}}})")
        elif n in SYM_INPUTS.get(m.module, {}):
            conns.append(f".{n}({(sym or {})[n]})")
        elif n in ("clock", "reset"):
            conns.append(f".{n}({n})")
        else:
            conns.append(f".{n}({prefix}{n})")
    body = ",\n    ".join(conns)
    return f"  {checker_of(m)} #({_param_list(ps)}) {instance} (\n    {body}\n  );\n"


def _checker_ports(m: Manifest) -> list[str]:
    """The checker module's port names, in declaration order (read from its source; the port-list
    macros of the shared files, e.g. `XLAT_CHK_MEM_PORTS, expanded)."""
    import re

    macros = {}
    for f in COMMON:
        for name, args, body in re.findall(r"`define (XLAT_CHK_\w+)(?:\((\w+)[^)]*\))? \\\n(.*?)\n\n",
                                           (CHECKER_DIR / f).read_text(), re.S):
            macros[name] = (args, body)

    def names(text: str) -> list[str]:
        out = []
        for line in text.splitlines():
            use = re.match(r"\s*`(XLAT_CHK_\w+)(?:\((\w+)[^)]*\))?", line)
            if use:
                arg, body = macros[use.group(1)]
                out += names(body.replace(f"``{arg}", use.group(2)) if arg else body)
                continue
            out += re.findall(r"input\s+wire\s+(?:\[[^\]]*\]\s*)?(\w+)", line)
        return out

    text = (CHECKER_DIR / f"{checker_of(m)}.sv").read_text()
    head = text[text.index(f"module {checker_of(m)}"):]
    return names(head[head.index(") (") + 3:head.index(");")])


if __name__ == "__main__":
    # python -m xlat_tb.checkers CONFIG [PREFIX]: the bind statement (and, with PREFIX, the
    # instantiation over signals PREFIX<port>) of CONFIG's checker, for a user to paste
    import sys

    from .manifest import load_manifest

    man = load_manifest(sys.argv[1])
    print(bind_text(man) if len(sys.argv) < 3 else instance_text(man, sys.argv[2]), end="")
