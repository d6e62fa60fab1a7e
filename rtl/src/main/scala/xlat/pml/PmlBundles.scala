package xlat.pml

import chisel3._

/** A page became dirty (NestedWalker's `dirty` channel). */
class PmlDirty(p: PmlParams) extends Bundle {
  val gpa = UInt((p.paBits - 12).W)
  val gva = UInt((p.vaBits - 12).W)
  val vmid = UInt(p.vmidBits.W)
  val asid = UInt(p.asidBits.W)
}

class CsrReq extends Bundle {
  val addr = UInt(16.W)
  val write = Bool()
  val wdata = UInt(64.W)
}

class CsrResp extends Bundle {
  val rdata = UInt(64.W)
  val error = Bool()
}

class PmlExit(p: PmlParams) extends Bundle {
  val vmid = UInt(p.vmidBits.W)
  val reason = UInt(16.W)
}

class PmlGuestIrq(p: PmlParams) extends Bundle {
  val vmid = UInt(p.vmidBits.W)
  val vector = UInt(p.irqVectorBits.W)
}

/** An event waiting in its context's queue, with the parts it still owes. */
class PmlEvent(p: PmlParams) extends Bundle {
  val gpa = UInt((p.paBits - 12).W)
  val gva = UInt((p.vaBits - 12).W)
  val pml = Bool()
  val guest = Bool()
}

object PmlPerf {
  val names: Seq[String] = Seq(
    "logged", "guestLogged", "exits", "guestIrqs", "stallCycles", "writeErrors", "ignored", "deduped", "badCsrs",
    "badMemResps"
  )
}

/** Views for the proofs (formalPorts only). */
class PmlDbg(p: PmlParams) extends Bundle {
  val pmlIndex = Vec(p.contexts, UInt(16.W))
  val gpmlIndex = Vec(p.contexts, UInt(16.W))
  val pmlAddr = Vec(p.contexts, UInt((p.paBits - 12).W))
  val gpmlAddr = Vec(p.contexts, UInt((p.paBits - 12).W))
  val full = Vec(p.contexts, Bool())
  val guestFull = Vec(p.contexts, Bool())
  val queueCount = Vec(p.contexts, UInt(8.W))
  /** The write in the output register: its context and buffer (1 = guest). */
  val outCtx = UInt(p.ctxBits.W)
  val outGuest = Bool()
  val outstanding = UInt((p.idBits + 1).W)
  /** The CSR stage (the access accepted last cycle, applying now) and its decode registers;
    * bit i of a register vector is the register at offset 8 * i (the proofs check each against
    * the request of the cycle before).
    */
  val csrValid = Bool()
  val csrWriting = Bool()
  val csrBad = Bool()
  val csrCtx = UInt(p.ctxBits.W)
  val csrWdata = UInt(p.paBits.W)
  val csrAt = UInt(PmlRegs.all(p).size.W)
  /** the read multiplexer's select: the registers, then (top bit) "no register" */
  val csrReadSel = UInt((PmlRegs.all(p).size + 1).W)
  val csrCtxOH = UInt(p.contexts.W)
  val csrWIn = Bool()
  val csrWInDec = Bool()
  /** bit regs * c + i: the write enable of context c's register i (STATUS: 0) */
  val csrWe = UInt((PmlRegs.all(p).size * p.contexts).W)
  /** the scheduler's candidate registers (the pick is computed without them; invariants I5, I6) */
  val candValid = Vec(p.contexts, Bool())
  /** The decide stage's valid (the stage register; the logic reads the credits instead). */
  val decValid = Bool()
  /** The decide stage's ignore bit (the stage register; the logic reads `decIgnored`). */
  val decIgnore = Bool()
}
