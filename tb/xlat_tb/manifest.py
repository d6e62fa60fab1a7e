"""Loading build/rtl/<config>/manifest.json, written by the generator next to the Verilog.

Every width a testbench uses comes from here; nothing the manifest gives is hard-coded.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from .paths import RTL_BUILD


@dataclass(frozen=True)
class Port:
    name: str
    direction: str  # "input" / "output"
    width: int


@dataclass
class Manifest:
    config: str
    block: str
    module: str
    params: dict
    derived: dict
    files: list[str]
    ports: dict[str, Port]
    path: Path
    raw: dict = field(repr=False, default_factory=dict)

    @property
    def rtl_dir(self) -> Path:
        return self.path.parent

    @property
    def sources(self) -> list[Path]:
        return [self.rtl_dir / f for f in self.files]

    def width(self, port: str) -> int:
        try:
            return self.ports[port].width
        except KeyError:
            raise KeyError(f"{self.config}: manifest has no port {port!r}") from None

    def has(self, port: str) -> bool:
        return port in self.ports

    def channel_fields(self, prefix: str) -> dict[str, int]:
        """{field: width} of the ``<prefix>_bits_<field>`` ports, in manifest order."""
        head = f"{prefix}_bits_"
        return {n[len(head):]: p.width for n, p in self.ports.items() if n.startswith(head)}

    def ports_with_prefix(self, prefix: str) -> dict[str, Port]:
        return {n: p for n, p in self.ports.items() if n.startswith(prefix)}


def manifest_path(config: str) -> Path:
    root = Path(os.environ.get("XLAT_RTL_DIR", RTL_BUILD))
    return root / config / "manifest.json"


def available(config: str) -> bool:
    return manifest_path(config).is_file()


def load_manifest(config_or_path: str | Path) -> Manifest:
    path = Path(config_or_path)
    if not path.suffix == ".json":
        path = manifest_path(str(config_or_path))
    raw = json.loads(path.read_text())
    ports = {}
    for p in raw["ports"]:
        ports[p["name"]] = Port(p["name"], p["direction"], int(p["width"]))
    for required in ("config", "module", "params", "files"):
        if required not in raw:
            raise ValueError(f"{path}: manifest lacks {required!r}")
    return Manifest(config=raw["config"], block=raw.get("block", ""), module=raw["module"],
                    params=dict(raw["params"]), derived=dict(raw.get("derived", {})),
                    files=list(raw["files"]), ports=ports, path=path, raw=raw)
