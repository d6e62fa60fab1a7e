"""Session-wide pytest hooks of `make test` (tb/ formal/ sim/ fpga/ in one session).

* Tiers (README.md "Tiers"): a case marked ``extended`` (the test-only configurations'
  testbenches, the proofs of test-only parameter variants) runs only when XLAT_EXTENDED=1
  (`make soak` sets it); otherwise it is deselected (a run without xdist counts it in the summary line).

* Order: the long formal tasks first among the single tasks. Two xdist workers share the
  suite; a 5-minute task that starts last runs alone at the end (walker_cover, 7 min before
  its split, did that). SLOW_FIRST lists them, longest first (CPU seconds on a quiet machine,
  2026-11-28). Under `--dist loadgroup` xdist hands out the work units largest first (its
  default `--loadscope-reorder`): every configuration's group of cocotb cases, then the
  single tasks in this order, so the formal tasks start once the groups are handed out
  (2026-11-28, clean clone: the first formal task started 11 minutes before the end of
  `make test`, the last one ended 1.5 minutes before it).
* Groups: every cocotb case of one configuration is in one ``xdist_group`` (`make test` runs
  ``--dist loadgroup``), so that one worker builds the model and runs the shared directed
  simulation (tb/xlat_tb/batch.py) and the other worker never repeats its tests alone. The
  group reaches the scheduler as the node id's ``@<group>`` suffix: pytest-xdist 3.8 writes it
  to ``item._nodeid``, which pytest 9 no longer reads (the id is ``item._id``), so this hook
  sets it there (`_with_group`). Until 2026-11-28 it did not, the groups had no effect, and a
  configuration's directed cases could run twice: in the shared simulation on one worker and
  alone on the other while the first held the lock. Cases marked ``xdist_group`` in their
  module (tb/generator's cases that share one JVM, `generate_many`) get the same suffix.
"""

import os
import sys

import pytest

_TB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tb")
if _TB not in sys.path:
    sys.path.insert(0, _TB)

from xlat_tb import batch  # noqa: E402

# node-id fragments of the tasks to start first, longest first (CPU seconds on a quiet machine)
SLOW_FIRST = [
    "test_sby[perforated_sets_prove]",  # ~325-366 s (the set-associative bitmap cache, k = 8; 2026-11-30)
    "test_sby[perforated_prove]",       # ~250-300 s (k = 8, with the miss queue; 2026-11-28)
    "test_sby[perforated_sets_cover]",  # ~140-173 s (depth 46; 2026-11-30)
    "test_sby[walker_cover_walks]",     # ~76 s
    "test_sby[prove_vmid_sram4]",       # ~78 s (BabelFishTlb with a VMID tag on block RAM; 2026-11-30)
    "test_sby[prove_share_sram6]",      # ~74 s
    "test_sby[perforated_cover]",       # ~55 s (checked at step 37 only since 2026-11-28; 137 s before)
    "test_fpga_smoke.py::test_quick_flow",  # ~55 s (Yosys + nextpnr + synth_xilinx)
    "test_sby[walker_prove_live]",      # ~47 s
    "test_sby[walker_cover]",           # ~45 s
    "test_sby[prove_vmid]",             # ~45 s (BabelFishTlb with a VMID tag; 2026-11-30)
    "test_sby[cover_vmid]",             # ~40 s
    "test_sby[pml_prove_1c]",           # ~38 s
    "test_sby[prove_share_sram4]",      # ~35 s
    "test_sby[devtlb_prove]",           # ~30 s (k = 3 since 2026-11-28; 170 s at k = 6)
]


def _rank(item) -> int:
    for n, frag in enumerate(SLOW_FIRST):
        if item.nodeid.endswith(frag):
            return n
    return len(SLOW_FIRST)


def pytest_configure(config):
    config.addinivalue_line("markers", "extended: make soak only (XLAT_EXTENDED=1): test-only "
                            "configurations and proofs of parameter variants")


def extended_enabled() -> bool:
    return os.environ.get("XLAT_EXTENDED", "").strip() not in ("", "0")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    if not extended_enabled():
        dropped = [i for i in items if i.get_closest_marker("extended") is not None]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [i for i in items if i.get_closest_marker("extended") is None]
    items.sort(key=_rank)               # stable: everything else keeps collection order
    loadgroup = getattr(config.option, "loadgroup", False)   # set by xdist on its workers
    for item in items:
        group = batch.group_of(item) or _marked_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
            if loadgroup:
                _with_group(item, group)


def _marked_group(item):
    """The group of a case marked ``xdist_group`` in its module (cases sharing one process, e.g.
    tb/generator's JVM and Yosys runs), which needs the same node-id suffix."""
    m = item.get_closest_marker("xdist_group")
    return (m.args[0] if m.args else m.kwargs.get("name")) if m is not None else None


def _with_group(item, group: str) -> None:
    """Give ``item`` the node id ``<id>@<group>`` that xdist's loadgroup scheduler splits on."""
    if hasattr(item, "_id"):            # pytest >= 9: the id is a structured NodeId
        from _pytest.nodeid import NodeId
        item._id = NodeId.parse(f"{item.nodeid}@{group}")
    else:                               # pytest < 9 reads _nodeid (xdist sets it there itself)
        item._nodeid = f"{item.nodeid}@{group}"


def pytest_collection_finish(session):
    batch.plan(session.items)
