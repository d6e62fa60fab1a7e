package xlat.devtlb

import xlat.common.{BlockConfigs, Design}

/** DevTlb for the generator: its named configurations, the HyperTRIO steps (docs/devtlb.md). */
object DevTlbConfigs extends BlockConfigs[DevTlbParams] {
  val block = "devtlb"
  def defaults: DevTlbParams = DevTlbParams()

  def design(config: String, p: DevTlbParams): Design =
    Design(config, block, "DevTlb", p, p.derived)(() => new DevTlb(p))

  private def noPrefetch(ptb: Int, partitioned: Boolean) =
    DevTlbParams(partitioned = partitioned, ptbEntries = ptb, pbEntries = 0)

  /** Small enough for the proofs, with the `dbg_*` ports they read. */
  private def formal = DevTlbParams(
    sets = 2, ways = 2, sidBits = 2, iovaBits = 22, ppnBits = 21, ptbEntries = 2, pbEntries = 2,
    histDistance = 2, predictorEntries = 4, historyEntries = 4, tagBits = 2, respQueue = 2,
    invalPending = 2, formalPorts = true
  )

  def named: Seq[(String, () => DevTlbParams)] = Seq(
    "devtlb_base" -> (() => noPrefetch(1, partitioned = false)),
    "devtlb_part" -> (() => noPrefetch(1, partitioned = true)),
    "devtlb_ptb8" -> (() => noPrefetch(8, partitioned = true)),
    "devtlb_ptb32" -> (() => noPrefetch(32, partitioned = true)),
    // 16 prefetch slots for the 8-entry PB: a tenant's two history pages are usually two 4 KiB
    // pages of one 2 MiB translation, so 8 slots cover only 4 tenants a round trip; 16 reach the
    // link rate at 1024 tenants (docs/devtlb.md, "Evaluation").
    "devtlb_full" -> (() => DevTlbParams(pfSlots = 16)),
    "devtlb_formal" -> (() => formal)
  )
}
