package xlat.babelfish

import xlat.common.{BlockConfigs, Design}

/** BabelFishTlb for the generator: its named configurations (docs/babelfish-tlb.md lists them). */
object BabelFishConfigs extends BlockConfigs[BabelFishParams] {
  val block = "babelfish"
  def defaults: BabelFishParams = BabelFishParams()

  def design(config: String, p: BabelFishParams): Design =
    Design(config, block, "BabelFishTlb", p, p.derived)(() => new BabelFishTlb(p))

  /** 1536 entries in SRAM: the spec's L2 size; latency 6 (the operation registered before the
    * block-RAM read, and the row registered again after it: see docs, Timing).
    */
  private def l2 = BabelFishParams(sets = 128, ways = 12, superpageEntries = 16, storage = "sram", latency = 6)

  /** Small enough for the proofs, with the `dbg_*` ports they read. */
  private def formal = BabelFishParams(
    sets = 2, ways = 2, superpageEntries = 2, vpnBits = 20, ppnBits = 27,
    pcidBits = 2, ccidBits = 2, pcBits = 3, formalPorts = true
  )

  def named: Seq[(String, () => BabelFishParams)] = Seq(
    "babelfish_l1" -> (() => BabelFishParams()),
    "babelfish_l1_noshare" -> (() => BabelFishParams(sharing = false)),
    "babelfish_l2" -> (() => l2),
    "babelfish_l2_noshare" -> (() => l2.copy(sharing = false)),
    "babelfish_formal" -> (() => formal),
    "babelfish_formal_noshare" -> (() => formal.copy(sharing = false))
  )
}
