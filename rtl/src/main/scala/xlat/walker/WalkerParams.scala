package xlat.walker

import chisel3.util.log2Ceil
import xlat.common.{PtFormat, PtFormats}

/** Parameters of [[NestedWalker]]; see docs/nested-walker.md for their meaning. */
case class WalkerParams(
    guest: String = "x86_64_4",
    host: String = "ept4",
    walkers: Int = 4,
    guestPwcEntries: Int = 16,
    hostPwcEntries: Int = 16,
    nestedTlbEntries: Int = 16,
    adUpdate: String = "hardware",
    idBits: Int = 4,
    asidBits: Int = 16,
    vmidBits: Int = 16,
    paBits: Int = 52,
    formalPorts: Boolean = false
) {
  val g: PtFormat = PtFormats.guest(guest)
  val h: PtFormat = PtFormats.host(host)
  require(walkers >= 1 && walkers <= 16, s"walkers must be in 1..16, got $walkers")
  require(guestPwcEntries >= 0 && guestPwcEntries <= 64, s"guestPwcEntries must be in 0..64, got $guestPwcEntries")
  require(hostPwcEntries >= 0 && hostPwcEntries <= 64, s"hostPwcEntries must be in 0..64, got $hostPwcEntries")
  require(nestedTlbEntries >= 0 && nestedTlbEntries <= 64, s"nestedTlbEntries must be in 0..64, got $nestedTlbEntries")
  require(adUpdate == "hardware" || adUpdate == "fault", s"adUpdate must be one of hardware, fault, got '$adUpdate'")
  require(idBits >= 1 && idBits <= 8, s"idBits must be in 1..8, got $idBits")
  require(walkers <= (1 << idBits), s"walkers must be at most 2^idBits = ${1 << idBits} (ids in flight are unique), got $walkers")
  require(asidBits >= 1 && asidBits <= 16, s"asidBits must be in 1..16, got $asidBits")
  require(vmidBits >= 1 && vmidBits <= 16, s"vmidBits must be in 1..16, got $vmidBits")
  require(paBits >= 32 && paBits <= 56, s"paBits must be in 32..56, got $paBits")

  val hardwareAd: Boolean = adUpdate == "hardware"
  /** Guest-physical address width: the host format's input range. */
  val gpaBits: Int = h.inputBits
  /** Width of a GPA as a guest entry can name it (wider than gpaBits: the excess is fault 5). */
  val targetBits: Int = (12 + g.ppnWidth).max(gpaBits)
  /** Width of the guest root's address: a GPA, or an HPA in stage-1-only mode (as far as a
    * guest entry can name one). */
  val rootBits: Int = gpaBits.max(paBits).min(targetBits)
  val slotBits: Int = log2Ceil(walkers).max(1)
  /** Low bits of `hRoot` a walk ignores: 2 for an x4 host root (16 KiB, 11 index bits). */
  val hRootDrop: Int = if (h.rootIndexBits > 9) 2 else 0
  val levelBits: Int = 3
  /** Reads a walk can need: (g+1)(h+1)-1 plain, g+1 locked host-leaf and 1 locked guest-leaf. */
  val maxReads: Int = (g.levels + 1) * (h.levels + 1) - 1 + g.levels + 2
  val maxWrites: Int = g.levels + 2

  def derived: Seq[(String, Any)] = Seq(
    "gpaBits" -> gpaBits,
    "guestLevels" -> g.levels,
    "hostLevels" -> h.levels,
    "coldReads" -> ((g.levels + 1) * (h.levels + 1) - 1),
    "coldReadsStage1" -> g.levels,
    "coldReadsStage2" -> h.levels,
    "maxReads" -> maxReads,
    "maxWrites" -> maxWrites,
    // for the FPGA report's pipeline column (docs/nested-walker.md, "Caches": four-cycle lookups)
    "pipeline" -> (if (guestPwcEntries + hostPwcEntries + nestedTlbEntries > 0) "cache lookups 4 cycles" else "no caches")
  )
}
