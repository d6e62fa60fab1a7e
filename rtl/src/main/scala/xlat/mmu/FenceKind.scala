package xlat.mmu

import chisel3._
import chisel3.util._
import xlat.babelfish.InvalKind
import xlat.common.TransMode
import xlat.walker.FlushKind

/** The MMU's fence kinds and what each one removes (docs/xlat-mmu.md "Fences", decided before
  * the RTL): the TLB invalidations (at most two, each sent to L1 and L2) in the TLB contexts
  * {mode class, vmid}, and the walker flush.
  *
  * RISC-V names; x86's INVLPG / INVPCID / INVEPT map onto them (docs/xlat-mmu.md, "Ports").
  * Kinds 13 to 15 are bad input: they act as 8 (everything; over-invalidation is always
  * allowed), `fenceDone` still pulses, and `perf_badFences` counts them.
  */
object FenceKind {
  val width = 4
  val SfenceAll = 0
  val SfenceAsid = 1
  val SfenceVa = 2
  val SfenceVaAsid = 3
  val HvvmaAll = 4
  val HvvmaAsid = 5
  val HvvmaVa = 6
  val HvvmaVaAsid = 7
  val GvmaAll = 8
  val GvmaVmid = 9
  val GvmaGpaVmid = 10
  val Ccid = 11
  val PageCcid = 12
  val last = PageCcid

  def bad(kind: UInt): Bool = kind > last.U

  /** The TLB context of a request or fence: {mode class, vmid}, vmid 0 for stage 1 only (the
    * host's own address spaces are one context). Decided in docs/xlat-mmu.md "Contexts".
    */
  def ctx(p: XlatMmuParams, modeClass: UInt, vmid: UInt): UInt =
    Cat(modeClass.pad(2)(1, 0), Mux(modeClass === TransMode.Stage1.U, 0.U(p.vmidBits.W), vmid.pad(p.vmidBits)(p.vmidBits - 1, 0)))
}

/** One TLB invalidation of a fence (sent to L1 and L2 alike). */
class FenceInval(p: XlatMmuParams) extends Bundle {
  val valid = Bool()
  val kind = UInt(InvalKind.width.W)
  val ctx = UInt(p.ctxBits.W)
}

/** A fence's plan: two TLB invalidations (the second may be absent) and the walker flush. */
class FencePlan(p: XlatMmuParams) extends Bundle {
  val inv = Vec(2, new FenceInval(p))
  val flushValid = Bool()
  val flushKind = UInt(2.W)
  val flushVmid = UInt(p.vmidBits.W)
}

object FencePlan {
  /** The plan of fence `f` (combinational; the sequencer registers it at acceptance). */
  def apply(p: XlatMmuParams, f: MmuFence): FencePlan = {
    val k = Mux(FenceKind.bad(f.kind), FenceKind.GvmaAll.U, f.kind)
    val plan = Wire(new FencePlan(p))
    val virt = k >= FenceKind.HvvmaAll.U && k <= FenceKind.HvvmaVaAsid.U
    // the four sfence.vma shapes, in ctx {1,0} or (hfence.vvma) {3,v}
    val shape = k(1, 0)
    val s1Kind = MuxLookup(shape, InvalKind.Vmid.U)(Seq(
      0.U -> InvalKind.Vmid.U, 1.U -> InvalKind.Pcid.U, 2.U -> InvalKind.PageVmid.U, 3.U -> InvalKind.PagePcid.U))
    val s1Ctx = Mux(virt, FenceKind.ctx(p, TransMode.Both.U, f.vmid), FenceKind.ctx(p, TransMode.Stage1.U, 0.U))
    val isS = k <= FenceKind.HvvmaVaAsid.U
    val isGvmaAll = k === FenceKind.GvmaAll.U
    val isGvmaVm = k === FenceKind.GvmaVmid.U || k === FenceKind.GvmaGpaVmid.U
    val isCcid = k === FenceKind.Ccid.U || k === FenceKind.PageCcid.U
    val ccidKind = Mux(k === FenceKind.Ccid.U, InvalKind.Ccid.U, InvalKind.PageCcid.U)

    plan.inv(0).valid := true.B
    plan.inv(0).kind := MuxCase(InvalKind.All.U, Seq(isS -> s1Kind, isGvmaVm -> InvalKind.Vmid.U, isCcid -> ccidKind))
    plan.inv(0).ctx := MuxCase(0.U, Seq(isS -> s1Ctx, isGvmaVm -> FenceKind.ctx(p, TransMode.Both.U, f.vmid),
      isCcid -> FenceKind.ctx(p, TransMode.Stage1.U, 0.U)))
    // hfence.gvma with a vmid: also the VM's stage-2-only context; a ccid fence: also the
    // guest processes' context (a fence names no mode: both classes that have a ccid)
    plan.inv(1).valid := isGvmaVm || isCcid
    plan.inv(1).kind := Mux(isCcid, ccidKind, InvalKind.Vmid.U)
    plan.inv(1).ctx := Mux(isCcid, FenceKind.ctx(p, TransMode.Both.U, f.vmid), FenceKind.ctx(p, TransMode.Stage2.U, f.vmid))

    // the walker: stage-1-only walks carry vmid 0; a ccid fence touches no table
    plan.flushValid := !isCcid
    val withAsid = isS && shape(0)
    plan.flushKind := Mux(isGvmaAll, FlushKind.All.U, Mux(withAsid, FlushKind.VmidAsid.U, FlushKind.Vmid.U))
    plan.flushVmid := Mux(isS && !virt, 0.U, f.vmid)
    plan
  }
}
