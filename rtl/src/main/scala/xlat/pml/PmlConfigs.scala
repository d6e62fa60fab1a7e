package xlat.pml

import xlat.common.{BlockConfigs, Design}

/** PmlLogger for the generator: its named configurations (docs/pml-logger.md lists them). Every
  * configuration also gets its register map (manifest, registers.md, C header); the one of
  * `pml_default` is the driver header `build/include/xlat_pml.h`.
  */
object PmlConfigs extends BlockConfigs[PmlParams] {
  val block = "pml"
  def defaults: PmlParams = PmlParams()

  def design(config: String, p: PmlParams): Design =
    Design(config, block, "PmlLogger", p, p.derived)(
      () => new PmlLogger(p),
      extraManifest = Seq("registers" -> PmlRegs.json(p)),
      extraFiles = Seq("xlat_pml.h" -> PmlRegs.cHeader(p, config), "registers.md" -> PmlRegs.markdown(p)) ++
        (if (config == "pml_default") Seq("../../include/xlat_pml.h" -> PmlRegs.cHeader(p, config)) else Seq())
    )

  /** Small enough for the proofs, with the `dbg_*` ports they read; without the input stage (the
    * proofs' queue model takes an accepted event into its queue in its acceptance cycle).
    */
  private def formal = PmlParams(
    contexts = 2, entries = 4, queueDepth = 2, idBits = 2, paBits = 32, vaBits = 39, vmidBits = 2, asidBits = 2,
    inputStage = false, formalPorts = true
  )

  def named: Seq[(String, () => PmlParams)] = Seq(
    "pml_default" -> (() => PmlParams()),
    "pml_dedup" -> (() => PmlParams(dedupEntries = 8)),
    "pml_formal" -> (() => formal)
  )
}
