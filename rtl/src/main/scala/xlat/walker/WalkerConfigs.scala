package xlat.walker

import xlat.common.{BlockConfigs, Design}

/** NestedWalker for the generator: its named configurations (docs/nested-walker.md lists them). */
object WalkerConfigs extends BlockConfigs[WalkerParams] {
  val block = "walker"
  def defaults: WalkerParams = WalkerParams()

  def design(config: String, p: WalkerParams): Design =
    Design(config, block, "NestedWalker", p, p.derived)(() => new NestedWalker(p))

  /** Small enough for the proofs, with the `dbg_*` ports they read. */
  private def formal = WalkerParams(
    guest = "sv39", host = "sv39x4", walkers = 2, guestPwcEntries = 2, hostPwcEntries = 2, nestedTlbEntries = 2,
    idBits = 2, asidBits = 2, vmidBits = 2, paBits = 32, formalPorts = true
  )

  def named: Seq[(String, () => WalkerParams)] = Seq(
    "walker_x86" -> (() => WalkerParams()),
    "walker_x86_5" -> (() => WalkerParams(guest = "x86_64_5", host = "ept5")),
    "walker_rv39" -> (() => WalkerParams(guest = "sv39", host = "sv39x4")),
    "walker_rv48" -> (() => WalkerParams(guest = "sv48", host = "sv48x4")),
    "walker_baseline" -> (() => WalkerParams(walkers = 1, guestPwcEntries = 0, hostPwcEntries = 0, nestedTlbEntries = 0)),
    "walker_formal" -> (() => formal)
  )
}
