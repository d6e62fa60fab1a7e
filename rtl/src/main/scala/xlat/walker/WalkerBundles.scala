package xlat.walker

import chisel3._
import xlat.common.{Perm, PrivFlags, TransMode}

/** A walk request: translate `gva` for (vmid, asid) through guest and host tables. */
class WalkReq(p: WalkerParams) extends Bundle {
  val id = UInt(p.idBits.W)
  val gva = UInt(64.W)
  val asid = UInt(p.asidBits.W)
  val vmid = UInt(p.vmidBits.W)
  /** Guest root table: a guest-physical page number, host-physical in stage-1-only mode (so
    * as wide as either can be, `rootBits`; a 2D walk's root beyond the GPA range is fault 5). */
  val gRoot = UInt((p.rootBits - 12).W)
  /** Host root table, a host-physical page number. */
  val hRoot = UInt((p.paBits - 12).W)
  val cmd = UInt(2.W)
  val user = Bool()
  /** [[xlat.common.TransMode]]: 1 stage 1 only, 2 stage 2 only (`gva` is a GPA), 3 both; 0 is
    * bad input (fault 4, counted in `badModes`). */
  val mode = UInt(TransMode.width.W)
  /** The core's privilege flags for the guest leaf's check ([[xlat.common.PrivCheck]]). */
  val flags = new PrivFlags
}

object Fault {
  val width = 3
  val None = 0
  val Guest = 1
  val Host = 2
  val Bus = 3
  val Reserved = 4
  val Range = 5
}

class WalkResp(p: WalkerParams) extends Bundle {
  val id = UInt(p.idBits.W)
  val fault = UInt(Fault.width.W)
  val faultLevel = UInt(3.W)
  /** 0 guest, 1 host. */
  val faultStage = UInt(1.W)
  val faultGpa = UInt(64.W)
  /** Host frame of the 4 KiB page holding gva. */
  val ppn = UInt((p.paBits - 12).W)
  val pageSize = UInt(2.W)
  val guestPageSize = UInt(2.W)
  val hostPageSize = UInt(2.W)
  val perm = new Perm
  val memReads = UInt(8.W)
  val memWrites = UInt(8.W)
}

/** A host leaf's D bit went 0 -> 1 (what PmlLogger consumes). */
class DirtyEvent(p: WalkerParams) extends Bundle {
  val gpa = UInt((p.gpaBits - 12).W)
  val gva = UInt(52.W)
  val vmid = UInt(p.vmidBits.W)
  val asid = UInt(p.asidBits.W)
  /** The page is a guest page table the walk read, not the page it translated. */
  val pageTable = Bool()
}

object FlushKind {
  val All = 0
  val Vmid = 1
  val VmidAsid = 2
}

class WalkerFlush(p: WalkerParams) extends Bundle {
  val kind = UInt(2.W)
  val vmid = UInt(p.vmidBits.W)
  val asid = UInt(p.asidBits.W)
}

object WalkerPerf {
  val names: Seq[String] = Seq(
    "walks", "memReads", "memWrites", "guestPwcHits", "hostPwcHits", "nestedTlbHits", "faults", "busErrors",
    "dirtyEvents", "hugeGuest", "hugeAligned", "splintered", "flushes", "badFlushes", "badMemResps", "idStalls",
    "badModes"
  )
}

/** Guest PWC: a guest pointer at `level` for the VA prefix above that level's index. */
class GuestPwcEntry(p: WalkerParams) extends Bundle {
  val vmid = UInt(p.vmidBits.W)
  val asid = UInt(p.asidBits.W)
  val level = UInt(p.levelBits.W)
  val vpn = UInt((p.g.inputBits - 12).W)
  /** Made by a stage-1-only walk: `table` is host-physical (a 2D walk's is guest-physical), so
    * it is part of the tag and an entry answers only walks of its own kind. */
  val s1 = Bool()
  /** The next table, a guest-physical page number (host-physical when `s1`). */
  val table = UInt((p.targetBits - 12).W)
  val perm = new Perm
}

/** Host PWC: a host pointer at `level` for the GPA prefix above that level's index. */
class HostPwcEntry(p: WalkerParams) extends Bundle {
  val vmid = UInt(p.vmidBits.W)
  val level = UInt(p.levelBits.W)
  val gpn = UInt((p.gpaBits - 12).W)
  val table = UInt((p.paBits - 12).W)
  val perm = new Perm
}

/** Nested TLB: a host leaf, GPA page -> HPA page at the leaf's size. */
class NestedTlbEntry(p: WalkerParams) extends Bundle {
  val vmid = UInt(p.vmidBits.W)
  val size = UInt(2.W)
  val gpn = UInt((p.gpaBits - 12).W)
  val base = UInt((p.paBits - 12).W)
  val perm = new Perm
  val d = Bool()
}

/** Views for the proofs (formalPorts only). */
class WalkerDbg(p: WalkerParams) extends Bundle {
  val slotBusy = Vec(p.walkers, Bool())
  val slotId = Vec(p.walkers, UInt(p.idBits.W))
  val slotReads = Vec(p.walkers, UInt(8.W))
  val slotWrites = Vec(p.walkers, UInt(8.W))
  val slotNoFill = Vec(p.walkers, Bool())
  val slotMemWait = Vec(p.walkers, Bool())
  /** Per slot: it holds the A/D lock of its `slotPteAddr` (its read-modify-write is under way). */
  val lockHeld = Vec(p.walkers, Bool())
  val slotPteAddr = Vec(p.walkers, UInt(p.paBits.W))
  /** Per slot: its A/D update sets D (a write). */
  val slotAdNeedD = Vec(p.walkers, Bool())
  val gpwcValid = Vec(p.guestPwcEntries.max(1), Bool())
  val gpwcVmid = Vec(p.guestPwcEntries.max(1), UInt(p.vmidBits.W))
  val hpwcValid = Vec(p.hostPwcEntries.max(1), Bool())
  val hpwcVmid = Vec(p.hostPwcEntries.max(1), UInt(p.vmidBits.W))
  val ntlbValid = Vec(p.nestedTlbEntries.max(1), Bool())
  val ntlbVmid = Vec(p.nestedTlbEntries.max(1), UInt(p.vmidBits.W))
  /** The step engine used a cache entry this cycle: which cache (0 none, 1 guest PWC, 2 host
    * PWC, 3 nested TLB), its vmid. */
  val hitCache = UInt(2.W)
  val hitVmid = UInt(p.vmidBits.W)
  /** The step engine filled a cache entry this cycle, for the slot `fillSlot`. */
  val fillValid = Bool()
  val fillSlot = UInt(p.slotBits.W)
  /** Per slot (bit i): the registered turn enable is the engine's (from its choice and the
    * slot's state), and when it is set the registered turn decision is the one of the slot's
    * registers (both are registered a cycle ahead). */
  val decOk = UInt(p.walkers.W)
  /** The registered channel choices are consistent with the slots' states (bit 0 the response's,
    * bit 1 the memory port's, bit 2 the dirty events': at most one slot, in a state that asks,
    * and one whenever a slot asks; ChannelChoice computes them a cycle ahead; bit 3: the
    * acceptance's registered idle bits are the slots' states). */
  val chanOk = UInt(4.W)
  /** While the step engine serves a slot, its registered key (the fields the lookups and fills
    * compare) is the slot's. */
  val keyOk = Bool()
  /** For a slot waiting for the A/D lock and a holder: the registered compare of their entry
    * addresses is the compare of their addresses now. */
  val lockOk = Bool()
  /** Host permission of the final mapping in a success response (r, w, x). */
  val respHostPerm = new Perm
  /** Per slot: the [[WalkState]] (as its encoding), the walk's position and request fields,
    * for the proofs' invariants (formal/walker). */
  val slotState = Vec(p.walkers, UInt(4.W))
  val slotGLevel = Vec(p.walkers, UInt(p.levelBits.W))
  val slotHLevel = Vec(p.walkers, UInt(p.levelBits.W))
  val slotForData = Vec(p.walkers, Bool())
  val slotAdHost = Vec(p.walkers, Bool())
  val slotMemKind = Vec(p.walkers, UInt(MemKind.width.W))
  val slotVmid = Vec(p.walkers, UInt(p.vmidBits.W))
  val slotAsid = Vec(p.walkers, UInt(p.asidBits.W))
  val slotCmd = Vec(p.walkers, UInt(2.W))
  val slotUser = Vec(p.walkers, Bool())
  val slotFault = Vec(p.walkers, UInt(Fault.width.W))
  val slotDirtyOnWrite = Vec(p.walkers, Bool())
  val slotGPerm = Vec(p.walkers, new Perm)
  val slotHPerm = Vec(p.walkers, new Perm)
  val gpwcAsid = Vec(p.guestPwcEntries.max(1), UInt(p.asidBits.W))
  /** Per slot its request's [[xlat.common.TransMode]]; per guest PWC entry its stage-1-only bit;
    * the guest PWC entry a hit shown in `hitCache` (1) uses: its stage-1-only bit. */
  val slotMode = Vec(p.walkers, UInt(2.W))
  val gpwcS1 = Vec(p.guestPwcEntries.max(1), Bool())
  val hitS1 = Bool()
  /** The slot the step engine serves this cycle (meaningful while a slot is in an engine state). */
  val engSlot = UInt(p.slotBits.W)
  /** The step engine serves `engSlot` this cycle; its round robin's `last` as a thermometer
    * (bit j: j after the last grant); the lookup turn's phase (1 select, 2 read, 3 turn). */
  val engValid = Bool()
  val engAfter = Vec(p.walkers, Bool())
  /** The engine's registered choice (computed a cycle ahead) is the round robin's on the slots'
    * states now: the first slot in an engine state after the last grant. */
  val engOk = Bool()
  val lookPhase = UInt(2.W)
  /** Which cache a fill this cycle (fillValid) writes: 1 guest PWC, 2 host PWC, 3 nested TLB. */
  val fillCache = UInt(2.W)
  /** The entry of that cache the fill writes (a free one, the victim, or the entry holding its key). */
  val fillWay = UInt(6.W)
  /** Per slot its request's privilege flags (the guest leaf's check reads them). */
  val slotFlags = Vec(p.walkers, new PrivFlags)
  /** Per cache (bit 0 guest PWC, 1 host PWC, 2 nested TLB; 1 for a cache the configuration
    * lacks): one copy per key (AssocCache `oneCopy`: no two entries hold one key, counting a
    * pending write's data, and a landing fill finds at most one entry holding its key). */
  val dupOk = UInt(3.W)
  /** The fill shown by `fillValid` writes the entry that held its key (it was de-duplicated). */
  val fillDup = Bool()
}
