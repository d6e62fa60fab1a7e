package xlat.privcheck

import chisel3._
import xlat.common.{AccessCmd, Perm, PrivCheck, PrivFlags}

/** Verdicts of the four stage checks for one access: true = the stage denies it. */
class PrivCheckDeny extends Bundle {
  val rvStage1 = Bool()
  val rvGStage = Bool()
  val x86 = Bool()
  val ept = Bool()
}

/** Test-only: [[xlat.common.PrivCheck]]'s functions on flat ports, so that a testbench drives
  * every input and reads each stage's verdict (docs/privcheck.md). Purely combinational (no
  * clock): the one permission input `perm` goes to every function, each reading its own fields.
  */
class PrivCheckWrapper extends RawModule {
  val cmd = IO(Input(UInt(AccessCmd.width.W)))
  val user = IO(Input(Bool()))
  /** Stage 1 is RISC-V's VS-stage (V = 1, or HLV/HSV): vsstatus.MXR applies. */
  val vsStage = IO(Input(Bool()))
  val flags = IO(Input(new PrivFlags))
  val perm = IO(Input(new Perm))
  val deny = IO(Output(new PrivCheckDeny))

  deny.rvStage1 := PrivCheck.rvStage1(cmd, user, vsStage, flags, perm)
  deny.rvGStage := PrivCheck.rvGStage(cmd, flags, perm)
  deny.x86 := PrivCheck.x86(cmd, user, flags, perm)
  deny.ept := PrivCheck.ept(cmd, perm)
}
