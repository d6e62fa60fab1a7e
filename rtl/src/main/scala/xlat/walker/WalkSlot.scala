package xlat.walker

import chisel3._
import xlat.common.{Perm, PrivFlags, TransMode}

/** Where a walk slot is in the 2D walk. Engine states take a turn of the shared step engine
  * (one a cycle); Issue states wait for the memory port; the rest wait for a response, the
  * A/D lock or an output channel.
  */
object WalkState extends ChiselEnum {
  val Idle,
      /** engine: reserved cmd, address check, guest PWC lookup */
      Start,
      /** engine: range check, nested TLB then host PWC lookup for `target` */
      HostStart,
      /** engine: check the host entry in `pte` */
      HostEntry,
      /** engine: fill the nested TLB, then read the guest entry or finish */
      HostLeafDone,
      /** engine: check the guest entry in `pte` */
      GuestEntry,
      /** engine: the final GPA from the guest leaf */
      GuestLeafDone,
      /** issue a read of the host entry at `pteAddr` */
      ReadHost,
      /** issue a read of the guest entry at `pteAddr` */
      ReadGuest,
      /** wait for the A/D lock of `pteAddr` */
      Lock,
      /** issue the locked re-read of the leaf at `pteAddr` */
      ReadLocked,
      /** issue the A/D write-back */
      WriteAd,
      /** wait for the memory response of `memKind` */
      MemWait,
      /** offer the dirty event */
      Dirty,
      /** offer the response */
      Done = Value
}

/** Kinds of memory access a slot waits for. */
object MemKind {
  val width = 2
  val HostEntry = 0
  val GuestEntry = 1
  val Locked = 2
  val Write = 3
}

/** The registers of one walk in flight. */
class WalkSlot(p: WalkerParams) extends Bundle {
  val id = UInt(p.idBits.W)
  val gva = UInt(64.W)
  val asid = UInt(p.asidBits.W)
  val vmid = UInt(p.vmidBits.W)
  /** The host root page number without the bits an x4 root ignores (its 16 KiB alignment). */
  val hRoot = UInt((p.paBits - 12 - p.hRootDrop).W)
  val cmd = UInt(2.W)
  val user = Bool()
  /** The request's [[TransMode]] (kept as its encoding: the proofs tie it to the request's). */
  val mode = UInt(TransMode.width.W)
  /** Stage 1 only: the guest's addresses are host-physical (identity host translations). */
  def s1Only: Bool = mode === TransMode.Stage1.U
  /** Stage 2 only: `gva` is a GPA, walked as a 2D walk's final GPA. */
  def s2Only: Bool = mode === TransMode.Stage2.U
  /** Bare mode: bad input, answered at Start with the Reserved fault. */
  def bare: Bool = mode === TransMode.Bare.U
  val flags = new PrivFlags
  // guest side
  val gLevel = UInt(p.levelBits.W)
  val gTable = UInt((p.targetBits - 12).W)
  val gPerm = new Perm
  // host side: translating `target` (a guest entry's GPA, or the final GPA when `forData`)
  val target = UInt(p.targetBits.W)
  val forData = Bool()
  val hLevel = UInt(p.levelBits.W)
  val hPerm = new Perm
  val leafD = Bool()
  // memory
  val pte = UInt(64.W)
  val pteAddr = UInt(p.paBits.W)
  val memKind = UInt(MemKind.width.W)
  val memErr = Bool()
  // A/D update
  val adHost = Bool()
  val adNeedD = Bool()
  val adData = UInt(64.W)
  val dirtyOnWrite = Bool()
  // result (a fault's GPA is `target`: every fault is of the GPA being translated, or of the
  // guest entry whose GPA `target` holds, and 0 in Start, before `target` is set)
  val ppn = UInt((p.paBits - 12).W)
  val gSize = UInt(p.levelBits.W)
  val hSize = UInt(p.levelBits.W)
  val fault = UInt(Fault.width.W)
  val faultLevel = UInt(3.W)
  val faultStage = UInt(1.W)
  val memReads = UInt(8.W)
  val memWrites = UInt(8.W)
  /** A flush happened while this walk was in flight: it fills no cache. */
  val noFill = Bool()
}
