package xlat.pml

import chisel3.util.{isPow2, log2Ceil}

/** Parameters of [[PmlLogger]]; see docs/pml-logger.md for their meaning. */
case class PmlParams(
    contexts: Int = 8,
    paBits: Int = 52,
    vaBits: Int = 57,
    entries: Int = 512,
    dedupEntries: Int = 0,
    irqVectorBits: Int = 8,
    queueDepth: Int = 4,
    idBits: Int = 4,
    vmidBits: Int = 16,
    asidBits: Int = 16,
    inputStage: Boolean = true,
    formalPorts: Boolean = false
) {
  require(contexts >= 1 && contexts <= 64, s"contexts must be in 1..64, got $contexts")
  require(paBits >= 32 && paBits <= 56, s"paBits must be in 32..56, got $paBits")
  require(vaBits >= 39 && vaBits <= 64, s"vaBits must be in 39..64, got $vaBits")
  require(entries >= 2 && entries <= 512 && isPow2(entries), s"entries must be a power of 2 in 2..512 (a 4 KiB buffer), got $entries")
  require(dedupEntries >= 0 && dedupEntries <= 64, s"dedupEntries must be in 0..64, got $dedupEntries")
  require(irqVectorBits >= 1 && irqVectorBits <= 16, s"irqVectorBits must be in 1..16, got $irqVectorBits")
  require(queueDepth >= 1 && queueDepth <= 16, s"queueDepth must be in 1..16, got $queueDepth")
  require(idBits >= 1 && idBits <= 8, s"idBits must be in 1..8, got $idBits")
  require(vmidBits >= 1 && vmidBits <= 16, s"vmidBits must be in 1..16, got $vmidBits")
  require(vmidBits >= log2Ceil(contexts), s"vmidBits must be at least log2(contexts) = ${log2Ceil(contexts)}, got $vmidBits")
  require(asidBits >= 1 && asidBits <= 16, s"asidBits must be in 1..16, got $asidBits")

  val ctxBits: Int = log2Ceil(contexts).max(1)
  val csrAddrBits = 16
  require(contexts * PmlRegs.stride <= (1 << csrAddrBits), "contexts do not fit the 16-bit CSR address space")
  val tags: Int = 1 << idBits
  /** The input's decide stage is there with `inputStage` and always with the filter. */
  val staged: Boolean = inputStage || dedupEntries > 0

  def derived: Seq[(String, Any)] = Seq("ctxBits" -> ctxBits, "stride" -> PmlRegs.stride, "exitReason" -> PmlRegs.exitReason,
    // for the FPGA report's pipeline column (docs/pml-logger.md, "Pipeline timing")
    "pipeline" -> s"event -> queue ${if (staged) 1 else 0} cycle${if (staged) "" else "s"}")
}
