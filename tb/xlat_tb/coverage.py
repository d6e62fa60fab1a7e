"""A small functional-coverage collector.

    cov = Coverage("babelfish_l1")
    cov.declare("lookup.hit.private", "lookup.miss", required=True)
    cov.declare("lookup.badPcIdx", required=False, why="pcBits is a power of 2")
    cov.hit("lookup.miss")
    log.info(cov.report()); cov.assert_required()

Bins are counted; a required bin with count 0 fails ``assert_required``.  An unreachable bin is
declared with ``required=False`` and a reason, which the report prints.
"""

from __future__ import annotations

from collections import Counter

from .cycle import TbError


class Coverage:
    def __init__(self, title: str):
        self.title = title
        self.counts: Counter = Counter()
        self.required: dict[str, bool] = {}
        self.why: dict[str, str] = {}

    def declare(self, *names: str, required: bool = True, why: str = ""):
        for n in names:
            self.required[n] = required
            if why:
                self.why[n] = why
            self.counts.setdefault(n, 0)

    def hit(self, name: str, n: int = 1):
        self.counts[name] += n

    def missing(self) -> list[str]:
        return [n for n, req in self.required.items() if req and self.counts[n] == 0]

    def report(self) -> str:
        names = sorted(self.counts)
        w = max((len(n) for n in names), default=10)
        lines = [f"functional coverage: {self.title}"]
        for n in names:
            req = self.required.get(n)
            tag = "" if req else ("  (not required: " + self.why.get(n, "informational") + ")")
            flag = "MISSING " if req and self.counts[n] == 0 else "        "
            lines.append(f"  {flag}{n:<{w}} {self.counts[n]:>8}{tag}")
        req = [n for n, r in self.required.items() if r]
        lines.append(f"  required bins hit: {len(req) - len(self.missing())}/{len(req)}")
        return "\n".join(lines)

    def assert_required(self):
        miss = self.missing()
        if miss:
            raise TbError(f"coverage holes in {self.title}: {', '.join(miss)}")
