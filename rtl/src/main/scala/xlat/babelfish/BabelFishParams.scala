package xlat.babelfish

import chisel3.util.{isPow2, log2Ceil}
import xlat.common.{LookupTiming, ReplacementKind, StorageKind}

/** Parameters of [[BabelFishTlb]]; see docs/babelfish-tlb.md for their meaning.
  *
  * Every check names the parameter and its legal range, so that an illegal configuration stops
  * the generator with one readable line.
  */
case class BabelFishParams(
    sets: Int = 16,
    ways: Int = 4,
    superpageEntries: Int = 8,
    vpnBits: Int = 36,
    ppnBits: Int = 40,
    pcidBits: Int = 12,
    ccidBits: Int = 12,
    pcBits: Int = 32,
    vmidBits: Int = 0,
    sharing: Boolean = true,
    replacement: String = "plru",
    storage: String = "flops",
    latency: Int = 4,
    formalPorts: Boolean = false
) {
  require(sets >= 1 && sets <= 4096 && isPow2(sets), s"sets must be a power of 2 in 1..4096, got $sets")
  require(ways >= 1 && ways <= 32, s"ways must be in 1..32, got $ways")
  require(superpageEntries >= 1 && superpageEntries <= 64, s"superpageEntries must be in 1..64, got $superpageEntries")
  require(ppnBits >= 19 && ppnBits <= 52, s"ppnBits must be in 19..52 (1 GiB pages need 18 offset bits), got $ppnBits")
  require(pcidBits >= 1 && pcidBits <= 16, s"pcidBits must be in 1..16, got $pcidBits")
  require(ccidBits >= 1 && ccidBits <= 16, s"ccidBits must be in 1..16, got $ccidBits")
  require(pcBits >= 1 && pcBits <= 64, s"pcBits must be in 1..64, got $pcBits")
  require(vmidBits >= 0 && vmidBits <= 16, s"vmidBits must be in 0..16 (0: no VMID tag), got $vmidBits")
  require(
    ReplacementKind.names.contains(replacement),
    s"replacement must be one of ${ReplacementKind.names.mkString(", ")}, got '$replacement'"
  )
  require(StorageKind.names.contains(storage), s"storage must be one of ${StorageKind.names.mkString(", ")}, got '$storage'")

  val setBits: Int = log2Ceil(sets)
  require(
    vpnBits >= 19 && vpnBits <= 52 && vpnBits > setBits,
    s"vpnBits must be in 19..52 and above log2(sets) = $setBits, got $vpnBits"
  )

  val sram: Boolean = storage == "sram"
  /** Stage registers of the lookup pipeline; `latency` = cycles from an accepted lookup to its response. */
  val timing: LookupTiming = LookupTiming(latency, sram, sramDeep = true)
  val pcIdxBits: Int = log2Ceil(pcBits).max(1)
  val tagBits: Int = vpnBits - setBits
  val entries: Int = sets * ways + superpageEntries
  /** Entries carry a VMID tag (kinds 6 and 7 of the invalidation are then defined). */
  val vmid: Boolean = vmidBits > 0
  /** PrivateCopy bits kept per entry: none without sharing. */
  val storedPcBits: Int = if (sharing) pcBits else 0

  /** Values a user does not set but testbenches and scripts need (written to the manifest). */
  def derived: Seq[(String, Any)] = Seq(
    "readReg" -> timing.readReg,
    "hitReg" -> timing.hitReg,
    "opReg" -> timing.opReg,
    "rowReg" -> timing.rowReg,
    "writeShadow" -> timing.writeShadow,
    /** Invalidations by owner sweep the sets one per cycle (sram with more than one set): kinds
      * 2 and 3, and with a VMID tag also 1 and 6 (docs "SRAM sweeps").
      */
    "sweeps" -> (sram && sets > 1),
    "pcIdxBits" -> pcIdxBits,
    "setBits" -> setBits,
    "entries" -> entries
  )
}
