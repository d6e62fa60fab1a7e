"""PerforatedL2Tlb: the bitmap word cache's shape, predicted on the reference model.

Runs the eval's target cells (sim/perforated_eval.py: `random_access`, 10 % of 1024 regions
fragmented, 16 000 requests, the first 20 % warm-up, seed 1) serially through
tb/models/perforated.py (`translate`: one request to its end at a time, so no two walks
overlap as they do in the RTL run with 16 in flight) for a few bitmap cache shapes, and prints
misses and memory reads per request as % of the ideal (the same model on the unfragmented
footprint), the bitmap hit rate and the reads without the bitmap reads (docs/perforated-l2tlb.md
"Where the bitmap words live").

    .venv/bin/python sim/perforated_bitmap_study.py [--requests N] [--variants a,b,...]

Variants (name: shape):
  fa32 / fa64        fully associative flops, 32 / 64 words (today / the legal maximum)
  sa<E>x<W>          <E> words, <W> ways, virtually indexed ((vpn >> 6) mod sets), block RAM
  pa128x8            the paper's variant's upper bound: 128 sets x 8 ways indexed by the word
                     index (physically), for bitmap words alone (no competition with 4 KiB
                     entries, so it overstates the paper's hit rate)
  perfect            every word ever read stays cached (compulsory misses only)
  <variant>+pwc<N>   the same with pwcEntries N (the shadow entries' reach)
  <variant>+s4k<N>   the same with sets4k N (the 4 KiB array's reach: the holes' own entries)

`--sweep` warms up as `make eval` does (one request to every 64-page chunk, excluded, before the
uniform requests; sim/perforated_eval.py `--perforated-warm sweep`).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tb"))
sys.path.insert(0, str(ROOT / "sim"))

from models.perforated import PerforatedModel, PerforatedParams, Req, SetAssoc  # noqa: E402
from models.walker import SparseMemory  # noqa: E402
from workloads import perforated as wl  # noqa: E402

CELLS = [(h, lay) for lay in ("clustered", "dispersed") for h in (1, 8, 64)]


class PaperModel(PerforatedModel):
    """Bitmap words in a 128 x 8 array indexed by the word index (frame >> 6)."""

    def reset(self):
        super().reset()
        self.bitmap = SetAssoc(128, 8)

    def _lookup_bitmap(self, vpn, index):
        self._count("bitmapLookups")
        w, e = self.bitmap.lookup(index % 128, index)
        if e is None:
            return None
        self.bitmap.touch(index % 128, w)
        self._count("bitmapHits")
        return e.word

    def _fill_bitmap(self, walk, index, word):
        from models.perforated import EBitmap
        if not walk.stale:
            self.bitmap.fill(index % 128, EBitmap(index, word))


class PerfectModel(PerforatedModel):
    def reset(self):
        super().reset()
        self.words = {}

    def _lookup_bitmap(self, vpn, index):
        self._count("bitmapLookups")
        if index in self.words:
            self._count("bitmapHits")
            return self.words[index]
        return None

    def _fill_bitmap(self, walk, index, word):
        if not walk.stale:
            self.words[index] = word


def make(variant: str, bitmap_base: int, mem) -> PerforatedModel:
    kw = {}
    if "+s4k" in variant:
        variant, n = variant.split("+s4k")
        kw["sets4k"] = int(n)
    if "+pwc" in variant:
        variant, n = variant.split("+pwc")
        kw["pwcEntries"] = int(n)
    cls = PerforatedModel
    if variant.startswith("fa"):
        kw["bitmapEntries"] = int(variant[2:])
    elif variant.startswith("sa"):
        e, w = map(int, variant[2:].split("x"))
        kw.update(bitmapEntries=e, bitmapSets=e // w)
    elif variant == "pa128x8":
        cls = PaperModel
    elif variant == "perfect":
        cls = PerfectModel
    else:
        raise SystemExit(f"unknown variant {variant}")
    m = cls(PerforatedParams(**kw), mem=mem, bitmap_base=bitmap_base)
    return m


def run(w, variant: str, warm: int) -> dict:
    m = make(variant, int(w.bitmap_base), SparseMemory(w.words))
    r = w.req
    n = len(r["vpn"])
    misses = reads = bmreads = 0
    c0 = None
    for i in range(n):
        if i == warm:
            c0 = dict(m.ctr)
        resp = m.translate(Req(id=0, vpn=int(r["vpn"][i]), asid=int(r["asid"][i]),
                               root=int(r["root"][i]), cmd=int(r["cmd"][i]), user=int(r["user"][i])))
        if i >= warm:
            misses += resp.memReads > 0
            reads += resp.memReads
            bmreads += sum(1 for q in resp.reads if q.kind == "bitmap")
    k = n - warm
    look = m.ctr["bitmapLookups"] - c0["bitmapLookups"]
    hits = m.ctr["bitmapHits"] - c0["bitmapHits"]
    return dict(misses=misses / k, reads=reads / k, nobm=(reads - bmreads) / k,
                hit=hits / look if look else None, bmreads=bmreads / k)


def hole_bound(w, warm: int, ideal_reads: float) -> tuple[float, int, int]:
    """Reads % of the ideal that no design can beat: a hole is a 4 KiB page, so the first access to
    each hole in a run reads at least its PTE, one read more than the ideal's 2 MiB page (whose
    read the ideal does as well, or saves by a 2 MiB hit the hole cannot use)."""
    vpn, hole = w.req["vpn"], (w.info & wl.INFO_HOLE) != 0
    seen = {int(v) for v in vpn[:warm][hole[:warm]]}
    first = 0
    window = [int(v) for v in vpn[warm:][hole[warm:]]]
    for v in window:
        first += v not in seen
        seen.add(v)
    k = len(vpn) - warm
    return 100 * ideal_reads / (ideal_reads + first / k), len(window), first


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=16000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variants", default="fa32,fa64,sa1024x4,sa2048x4,sa4096x4,pa128x8,perfect")
    ap.add_argument("--cells", default="", help="e.g. dispersed:8,clustered:64 (default: all six)")
    ap.add_argument("--sweep", action="store_true", help="warm up with one request per 64-page chunk first")
    a = ap.parse_args()
    variants = a.variants.split(",")
    cells = CELLS if not a.cells else [(int(c.split(":")[1]), c.split(":")[0]) for c in a.cells.split(",")]
    t0 = time.monotonic()
    ideal_w = wl.random_access(a.requests, frac=0.0, holes=0, layout="dispersed", seed=a.seed, sweep=a.sweep)
    warm = len(ideal_w.req["vpn"]) - a.requests + a.requests // 5
    ideal = run(ideal_w, "fa32", warm)
    print(f"ideal: misses {ideal['misses']:.4f} reads {ideal['reads']:.4f} per request", flush=True)
    print("| holes, layout | variant | misses % of ideal | reads % of ideal | bitmap hit rate | "
          "bitmap reads / request | reads without bitmap reads % of ideal |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for h, lay in cells:
        w = wl.random_access(a.requests, frac=0.10, holes=h, layout=lay, seed=a.seed, sweep=a.sweep)
        bound, acc, first = hole_bound(w, warm, ideal["reads"])
        print(f"| {lay}, {h} | bound: first touches of holes | - | {bound:.2f} | "
              f"{acc} hole accesses, {first} first touches | - | - |", flush=True)
        for v in variants:
            x = run(w, v, warm)
            hit = "-" if x["hit"] is None else f"{100 * x['hit']:.1f} %"
            print(f"| {lay}, {h} | {v} | {100 * ideal['misses'] / x['misses']:.2f} | "
                  f"{100 * ideal['reads'] / x['reads']:.2f} | {hit} | {x['bmreads']:.4f} | "
                  f"{100 * ideal['reads'] / x['nobm']:.2f} |", flush=True)
    print(f"({time.monotonic() - t0:.0f} s)")


if __name__ == "__main__":
    main()
