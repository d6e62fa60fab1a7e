package xlat.devtlb

import chisel3._
import chisel3.util._

/** A translation request of the device: tenant `sid`, 4 KiB page `iova`. */
class DevReq(p: DevTlbParams) extends Bundle {
  val tag = UInt(p.tagBits.W)
  val sid = UInt(p.sidBits.W)
  val iova = UInt(p.pageBits.W)
  val write = Bool()
}

object Source {
  val width = 2
  val DevTlb = 0
  val PrefetchBuffer = 1
  val Completion = 2
}

class DevResp(p: DevTlbParams) extends Bundle {
  val tag = UInt(p.tagBits.W)
  /** The frame of the requested 4 KiB page. */
  val ppn = UInt(p.ppnBits.W)
  val perm_r = Bool()
  val perm_w = Bool()
  val fault = Bool()
  val source = UInt(Source.width.W)
}

/** An ATS Translation Request; `tag` is the slot that waits for its completion. */
class AtsReq(p: DevTlbParams) extends Bundle {
  val tag = UInt(p.atsTagBits.W)
  val sid = UInt(p.sidBits.W)
  val iova = UInt(p.pageBits.W)
  val prefetch = Bool()
}

/** An ATS Translation Completion: `ppn` is the start of a page of `pageSize` (0 4 KiB, 1 2 MiB,
  * 2 1 GiB, 3 reserved).
  */
class AtsResp(p: DevTlbParams) extends Bundle {
  val tag = UInt(p.atsTagBits.W)
  val ppn = UInt(p.ppnBits.W)
  val perm_r = Bool()
  val perm_w = Bool()
  val pageSize = UInt(2.W)
  val fault = Bool()
}

object InvalKind {
  val width = 2
  val All = 0
  val Sid = 1
  val Range = 2
  val Reserved = 3
}

class DevInval(p: DevTlbParams) extends Bundle {
  val kind = UInt(InvalKind.width.W)
  val sid = UInt(p.sidBits.W)
  val iova = UInt(p.pageBits.W)
  val sizeLog2 = UInt(6.W)
}

/** A cached translation (DevTLB or prefetch buffer): a 4 KiB page or a 2 MiB piece (`big`),
  * whose `page` has the piece's low 9 bits cleared.
  */
class DevEntry(p: DevTlbParams) extends Bundle {
  val sid = UInt(p.sidBits.W)
  val page = UInt(p.pageBits.W)
  val big = Bool()
  val ppn = UInt(p.ppnBits.W)
  val perm_r = Bool()
  val perm_w = Bool()

  /** True when this entry translates page `q` of tenant `s`. */
  def covers(s: UInt, q: UInt): Bool = {
    val low = 9.min(p.pageBits)
    val hiEq = if (p.pageBits > low) page(p.pageBits - 1, low) === q(p.pageBits - 1, low) else true.B
    sid === s && hiEq && (big || page(low - 1, 0) === q(low - 1, 0))
  }

  /** The frame of page `q` inside this entry. */
  def frameOf(q: UInt): UInt = {
    val low = 9.min(p.ppnBits)
    Mux(big, Cat(ppn >> low, q(low - 1, 0)).pad(p.ppnBits), ppn)
  }
}

/** The key half of a DevTLB entry (what lookups compare), stored apart from its translation. */
class DevKey(p: DevTlbParams) extends Bundle {
  val sid = UInt(p.sidBits.W)
  val page = UInt(p.pageBits.W)
  val big = Bool()

  /** The whole entry with translation `ppn`, `r`, `w`. */
  def entry(ppn: UInt, r: Bool, w: Bool): DevEntry = {
    val e = Wire(new DevEntry(p))
    e.sid := sid
    e.page := page
    e.big := big
    e.ppn := ppn
    e.perm_r := r
    e.perm_w := w
    e
  }
}

object DevKey {
  def apply(p: DevTlbParams, e: DevEntry): DevKey = {
    val k = Wire(new DevKey(p))
    k.sid := e.sid
    k.page := e.page
    k.big := e.big
    k
  }
}

/** The translation half of a DevTLB entry. */
class DevData(p: DevTlbParams) extends Bundle {
  val ppn = UInt(p.ppnBits.W)
  val perm_r = Bool()
  val perm_w = Bool()
}

object DevData {
  def apply(p: DevTlbParams, e: DevEntry): DevData = {
    val d = Wire(new DevData(p))
    d.ppn := e.ppn
    d.perm_r := e.perm_r
    d.perm_w := e.perm_w
    d
  }
}

/** The counters of docs/devtlb.md, in the order of the `perf_*` ports. */
object DevTlbPerf {
  val names: Seq[String] = Seq(
    "requests", "hits", "pbHits", "misses", "merged", "atsRequests", "prefetches", "ptbFullCycles",
    "invalidations", "badCompletions", "badAlign", "badInvals", "faults", "claims", "prefetchDropped",
    "prefetchUnused", "staleCompletions", "respStallCycles", "atsStallCycles"
  )
}

/** The proofs' view (`formalPorts`): every DevTLB and PB entry, PTag and slot, flattened. */
class DevTlbDbg(p: DevTlbParams, pbN: Int) extends Bundle {
  private val e = p.sets * p.ways
  val tlbValid = UInt(e.W)
  val tlbSid = UInt((e * p.sidBits).W)
  val tlbPage = UInt((e * p.pageBits).W)
  val tlbBig = UInt(e.W)
  val ptagValid = UInt(p.sets.W)
  val ptag = UInt((p.sets * p.sidBits).W)
  val pbValid = UInt(pbN.W)
  val pbSid = UInt((pbN * p.sidBits).W)
  val pbPage = UInt((pbN * p.pageBits).W)
  val pbBig = UInt(pbN.W)
  val slotValid = UInt(p.slots.W)
  val slotDone = UInt(p.slots.W)
  val slotSent = UInt(p.slots.W)
  val slotStale = UInt(p.slots.W)
  val slotSid = UInt((p.slots * p.sidBits).W)
  val slotPage = UInt((p.slots * p.pageBits).W)
  val waiterValid = UInt(p.waiters.W)
  val pipeEmpty = Bool()
  val tlbPpn = UInt((e * p.ppnBits).W)
  val pbPpn = UInt((pbN * p.ppnBits).W)
  val slotCompleting = UInt(p.slots.W)
  val slotFault = UInt(p.slots.W)
  val slotFrame = UInt((p.slots * p.ppnBits).W)
  val waiterTag = UInt((p.waiters * p.tagBits).W)
  val waiterSlot = UInt((p.waiters * p.atsTagBits).W)
  val waiterOut = UInt(p.waiters.W)
  val waiterReady = UInt(p.waiters.W)
  val drainValid = Bool()
  val drainWaiter = UInt(log2Ceil(p.waiters).max(1).W)
  /** The drain's pick register (several slots; zero with one slot): valid, and its waiter one-hot. */
  val pickValid = Bool()
  val waiterPicked = UInt(p.waiters.W)
  val atsValid = Bool()
  val slotWaiters = UInt((p.slots * log2Ceil(p.waiters + 1)).W)
}
