package xlat.perforated

import xlat.common.{BlockConfigs, Design}

/** PerforatedL2Tlb for the generator: its named configurations (docs/perforated-l2tlb.md,
  * "Named configurations"; tb/models/perforated.py NAMED_CONFIGS holds the same table).
  */
object PerforatedConfigs extends BlockConfigs[PerforatedParams] {
  val block = "perforated"
  def defaults: PerforatedParams = PerforatedParams()

  def design(config: String, p: PerforatedParams): Design =
    Design(config, block, "PerforatedL2Tlb", p, p.derived)(() => new PerforatedL2Tlb(p))

  /** Small arrays in flops. */
  private def flops = PerforatedParams(
    storage = "flops", sets4k = 16, ways4k = 4, sets2m = 4, ways2m = 2, bitmapEntries = 8, pwcEntries = 8
  )

  /** Small enough for the proofs, with the `dbg_*` ports they read. */
  private def formal = PerforatedParams(
    storage = "flops", sets4k = 2, ways4k = 2, sets2m = 2, ways2m = 2, bitmapEntries = 2, pwcEntries = 2,
    walkers = 2, asidBits = 2, idBits = 2, paBits = 32, respQueue = 6, formalPorts = true
  )

  /** The bitmap words in a 2 048-word set-associative cache (512 sets x 4 ways, block RAM;
    * **decided** 2026-11-30, docs "The bitmap word cache's size": the spec's 32 words miss the
    * eval's targets with dispersed holes); the splintered baseline keeps the same block.
    */
  private def bigBitmap(p: PerforatedParams) = p.copy(bitmapEntries = 2048, bitmapSets = 512)

  def named: Seq[(String, () => PerforatedParams)] = Seq(
    "perforated_default" -> (() => bigBitmap(PerforatedParams())),
    "perforated_off" -> (() => bigBitmap(PerforatedParams(perforation = false))),
    "perforated_flops" -> (() => flops),
    "perforated_formal" -> (() => formal)
  )
}
