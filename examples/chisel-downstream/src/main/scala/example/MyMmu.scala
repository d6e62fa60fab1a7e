package example

import chisel3._
import circt.stage.ChiselStage
import xlat.babelfish.{BabelFishParams, BabelFishTlb}
import xlat.walker.{NestedWalker, WalkerParams}

/** A user's module with two xlat blocks inside: an L1 BabelFishTlb (the named configuration
  * babelfish_l1's parameters, 4-way, with sharing) and a NestedWalker for a RISC-V H core
  * (Sv39 guest, Sv39x4 host). Their ports are the module's, under the prefixes `tlb_` and
  * `walker_`; a real design would connect the TLB's miss side to the walker here.
  */
class MyMmu extends Module {
  private val l1 = Module(new BabelFishTlb(BabelFishParams()))
  private val ptw = Module(new NestedWalker(WalkerParams(guest = "sv39", host = "sv39x4")))

  val tlb = IO(chiselTypeOf(l1.io))
  val walker = IO(chiselTypeOf(ptw.io))
  tlb <> l1.io
  walker <> ptw.io
}

/** Writes MyMmu's SystemVerilog, one module a file, with the firtool options xlat's own
  * generator uses (`xlat.Emit.firtoolOpts`: no randomization, no layers, Verilator-clean).
  */
object EmitMyMmu extends App {
  val dir = args.headOption.getOrElse("verilog")
  ChiselStage.emitSystemVerilogFile(new MyMmu, Array("--target-dir", dir, "--split-verilog"), xlat.Emit.firtoolOpts)
  println(s"chisel-downstream: MyMmu (BabelFishTlb + NestedWalker from org.xlat:xlat) -> $dir")
}
