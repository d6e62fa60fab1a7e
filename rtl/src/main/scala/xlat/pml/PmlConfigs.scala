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
      extraFiles = Seq("xlat_pml.h" -> PmlRegs.cHeader(p, config), "registers.md" -> PmlRegs.markdown(p),
        s"$config.rdl" -> PmlRegs.regMap(p, config).systemRdl) ++
        (if (config == "pml_default") Seq("../../include/xlat_pml.h" -> PmlRegs.cHeader(p, config)) else Seq())
    )

  /** Small enough for the proofs, with the `dbg_*` ports they read; with the input stage, as
    * pml_default (the proofs' queue model has the same decide stage; formal/test_formal.py also
    * proves the single-cycle input, inputStage = false, as the test-only pml_formal_1c).
    */
  private def formal = PmlParams(
    contexts = 2, entries = 4, queueDepth = 2, idBits = 2, paBits = 32, vaBits = 39, vmidBits = 2, asidBits = 2,
    formalPorts = true
  )

  def named: Seq[(String, () => PmlParams)] = Seq(
    "pml_default" -> (() => PmlParams()),
    "pml_dedup" -> (() => PmlParams(dedupEntries = 8)),
    "pml_formal" -> (() => formal)
  )
}
