package xlat.mmu

import xlat.common.{BlockConfigs, Design}
import xlat.pml.PmlRegs

/** XlatMmu for the generator: its named configurations (docs/xlat-mmu.md lists them). Every
  * configuration's manifest also holds the MMU's CSR map ([[MmuRegs]]) and PmlLogger's
  * (`pmlRegisters`, offsets below 0x8000).
  */
object XlatMmuConfigs extends BlockConfigs[XlatMmuParams] {
  val block = "mmu"
  def defaults: XlatMmuParams = XlatMmuParams()

  def design(config: String, p: XlatMmuParams): Design =
    Design(config, block, "XlatMmu", p, p.derived)(() => new XlatMmu(p), extraManifest =
      Seq("registers" -> MmuRegs.json, "pmlRegisters" -> PmlRegs.json(p.pml)),
      extraFiles = Seq(s"$config.rdl" -> MmuRegs.regMap(p, config).systemRdl))

  /** x86-64 4-level paging over EPT 4-level; PCIDs are 12 bits. */
  private def x86 = XlatMmuParams(guest = "x86_64_4", host = "ept4", asidBits = 12)

  /** Small: Sv39 over Sv39x4, 2 x 2 + 2 entries per TLB (flops), 2-entry walker caches, 2 PML
    * contexts of 4 entries, small widths, `dbg_*` ports (for the composed proofs of issue 12 part 5, and fast
    * simulation of the directed tests).
    */
  private def formal = XlatMmuParams(
    guest = "sv39", host = "sv39x4", idBits = 2, asidBits = 2, vmidBits = 2, ccidBits = 2, pcBits = 3, paBits = 41,
    l1Sets = 2, l1Ways = 2, l1Superpages = 2, l2Sets = 4, l2Ways = 2, l2Superpages = 2, l2Storage = "flops", l2Latency = 4,
    guestPwcEntries = 2, hostPwcEntries = 2, nestedTlbEntries = 2, pmlContexts = 2, pmlEntries = 4, pmlIdBits = 2,
    formalPorts = true)

  def named: Seq[(String, () => XlatMmuParams)] = Seq(
    // one format pair per walker instance: Sv48 over Sv48x4 (Sv39 guests need their own instance)
    "mmu_rv" -> (() => XlatMmuParams()),
    "mmu_x86" -> (() => x86),
    "mmu_formal" -> (() => formal)
  )
}
