package xlat.common

import chisel3._
import chisel3.util._

/** Family of a page-table format: decides which rules of its entries apply. */
sealed trait PtFamily
object PtFamily {
  /** x86-64 paging: P bit, PS large pages at levels 1 and 2, NX, W and U ANDed over levels. */
  case object X86 extends PtFamily
  /** Intel EPT: R/W/X, PS large pages, memory type in leaves, R/W/X ANDed over levels. */
  case object Ept extends PtFamily
  /** RISC-V Sv*: V bit, leaf when R or X, permissions of the leaf only. */
  case object RiscV extends PtFamily
}

/** A page-table format as data, so that one walker serves every guest/host pair.
  *
  * Entries are 8 bytes; level 0 maps 4 KiB pages and a leaf at level `l` maps a page of size
  * code `l` (9 more address bits per level). Every bit position and rule is listed in
  * docs/nested-walker.md, which the Python reference model transcribes independently.
  *
  * @param levels        number of levels
  * @param rootIndexBits index bits of the root table (9, or 11 for the 16 KiB roots of x4)
  * @param inputBits     width of the translated address (VA for a guest, GPA for a host)
  * @param signExtended  the address check: bits above `inputBits - 1` copy bit `inputBits - 1`
  *                      (canonical form), otherwise they must be 0 (a host's input range)
  * @param ppnLsb        lowest bit of the PPN field; `ppnWidth` its width
  * @param aBit          accessed bit; `dBit` dirty bit (both in the same byte)
  * @param userRequired  G-stage rule: every access is a user access, so a leaf needs U
  */
case class PtFormat(
    name: String,
    family: PtFamily,
    levels: Int,
    rootIndexBits: Int,
    inputBits: Int,
    signExtended: Boolean,
    ppnLsb: Int,
    ppnWidth: Int,
    aBit: Int,
    dBit: Int,
    userRequired: Boolean
) {
  require(aBit / 8 == dBit / 8, s"$name: A and D must share a byte")
  val topLevel: Int = levels - 1
  /** Byte of the entry that holds A and D: the only byte an A/D write-back touches. */
  val adByte: Int = aBit / 8
  /** Index bits of level `l`. */
  def indexBits(l: Int): Int = if (l == topLevel) rootIndexBits else 9
  /** Lowest address bit of level `l`'s index. */
  def indexLsb(l: Int): Int = 12 + 9 * l
  /** Largest leaf level the format allows. */
  val maxLeafLevel: Int = family match {
    case PtFamily.RiscV => topLevel
    case _              => 2.min(topLevel)
  }
  val levelBits: Int = log2Ceil(levels + 1)

  private def mask(hi: Int, lo: Int): BigInt = if (hi < lo) BigInt(0) else ((BigInt(1) << (hi - lo + 1)) - 1) << lo
  private def bit(b: Int): BigInt = BigInt(1) << b

  /** Bits that must be 0 in a valid entry at `level`, for a leaf or a pointer. `paBits` bounds
    * the PPN of a host format (a guest's PPN is a GPA, checked against the host's range
    * instead, so a guest passes `paBits` = 64).
    */
  def reservedMask(level: Int, leaf: Boolean, paBits: Int): BigInt = {
    val ppnTooWide = if (paBits - 12 < ppnWidth) mask(ppnLsb + ppnWidth - 1, ppnLsb + paBits - 12) else BigInt(0)
    val own = family match {
      case PtFamily.X86 =>
        if (!leaf) (if (level >= 3) bit(7) else BigInt(0))
        else if (level == 1) mask(20, 13)
        else if (level == 2) mask(29, 13)
        else BigInt(0)
      case PtFamily.Ept =>
        if (!leaf) (if (level >= 3) mask(7, 3) else mask(6, 3))
        else if (level == 1) mask(20, 12)
        else if (level == 2) mask(29, 12)
        else BigInt(0)
      case PtFamily.RiscV =>
        mask(63, 54) | (if (leaf) BigInt(0) else bit(4) | bit(6) | bit(7))
    }
    own | ppnTooWide
  }

  /** The decoded entry at `level` (a hardware level number below `levels`). */
  def decode(pte: UInt, level: UInt, paBits: Int): PtEntry = {
    val e = Wire(new PtEntry)
    val isLeaf = family match {
      case PtFamily.RiscV => pte(1) || pte(3)
      case _              => level === 0.U || ((level === 1.U || level === 2.U) && pte(7))
    }
    // One constant mask per (level, leaf): synthesis keeps only the bits each can set.
    def setIn(m: BigInt): Bool = if (m == 0) false.B else (pte & m.U(64.W)).orR
    val reservedBits = MuxLookup(level, false.B)(
      (0 until levels).map(l =>
        l.U -> Mux(isLeaf, setIn(reservedMask(l, leaf = true, paBits)), setIn(reservedMask(l, leaf = false, paBits)))
      )
    )
    // Write without read is a misconfiguration (EPT) or a reserved encoding (RISC-V).
    val wNoR = family match {
      case PtFamily.X86   => false.B
      case PtFamily.Ept   => pte(1) && !pte(0)
      case PtFamily.RiscV => pte(2) && !pte(1)
    }
    val badMemType = family match {
      case PtFamily.Ept =>
        val t = pte(5, 3)
        isLeaf && (t === 2.U || t === 3.U || t === 7.U)
      case _ => false.B
    }
    e.valid := (family match {
      case PtFamily.X86   => pte(0)
      case PtFamily.Ept   => pte(2, 0).orR
      case PtFamily.RiscV => pte(0)
    })
    e.leaf := isLeaf
    e.reserved := reservedBits || wNoR || badMemType
    e.ppn := pte(ppnLsb + ppnWidth - 1, ppnLsb).pad(PtEntry.ppnBits)
    // RISC-V: a pointer at level 0, or a superpage whose PPN is not aligned to its size.
    e.pageFault := (family match {
      case PtFamily.RiscV =>
        val lowPpn = MuxLookup(level, false.B)((1 until levels).map(l => l.U -> pte(ppnLsb + 9 * l - 1, ppnLsb).orR))
        (!isLeaf && level === 0.U) || (isLeaf && lowPpn)
      case _ => false.B
    })
    family match {
      case PtFamily.X86 =>
        e.perm.r := true.B; e.perm.w := pte(1); e.perm.x := !pte(63); e.perm.u := pte(2)
      case PtFamily.Ept =>
        e.perm.r := pte(0); e.perm.w := pte(1); e.perm.x := pte(2); e.perm.u := true.B
      case PtFamily.RiscV =>
        e.perm.r := pte(1); e.perm.w := pte(2); e.perm.x := pte(3); e.perm.u := pte(4)
    }
    e.a := pte(aBit)
    e.d := pte(dBit)
    e
  }

  /** Permissions after a pointer or leaf with `own`, given those of the levels above. */
  def accumulate(above: Perm, own: Perm, leaf: Bool): Perm = family match {
    case PtFamily.RiscV => Mux(leaf, own, above)
    case _ =>
      val p = Wire(new Perm)
      p.r := above.r && own.r; p.w := above.w && own.w; p.x := above.x && own.x; p.u := above.u && own.u
      p
  }

  /** Index of `addr` at `level`, zero-extended to the root's width. */
  def index(addr: UInt, level: UInt): UInt =
    MuxLookup(level, 0.U(rootIndexBits.max(9).W))(
      (0 until levels).map(l => l.U -> addr(indexLsb(l) + indexBits(l) - 1, indexLsb(l)).pad(rootIndexBits.max(9)))
    )

  /** True when `addr` passes the format's address check (canonical form, or the input range). */
  def inRange(addr: UInt): Bool =
    if (signExtended) {
      val top = addr(addr.getWidth - 1, inputBits - 1)
      top.andR || !top.orR
    } else if (addr.getWidth <= inputBits) true.B
    else !addr(addr.getWidth - 1, inputBits).orR
}

/** A decoded page-table entry (see [[PtFormat.decode]]). */
class PtEntry extends Bundle {
  val valid = Bool()
  val leaf = Bool()
  val reserved = Bool()
  val pageFault = Bool()
  val ppn = UInt(PtEntry.ppnBits.W)
  val perm = new Perm
  val a = Bool()
  val d = Bool()
}

object PtEntry {
  /** Widest PPN field of any format (RISC-V: 44 bits). */
  val ppnBits = 44
}

/** The formats of the library by name. */
object PtFormats {
  private def x86(name: String, levels: Int) =
    PtFormat(name, PtFamily.X86, levels, 9, 12 + 9 * levels, signExtended = true, 12, 40, 5, 6, userRequired = false)
  private def ept(name: String, levels: Int) =
    PtFormat(name, PtFamily.Ept, levels, 9, 12 + 9 * levels, signExtended = false, 12, 40, 8, 9, userRequired = false)
  private def sv(name: String, levels: Int) =
    PtFormat(name, PtFamily.RiscV, levels, 9, 12 + 9 * levels, signExtended = true, 10, 44, 6, 7, userRequired = false)
  private def svx4(name: String, levels: Int) =
    PtFormat(name, PtFamily.RiscV, levels, 11, 14 + 9 * levels, signExtended = false, 10, 44, 6, 7, userRequired = true)

  val guests: Seq[PtFormat] = Seq(x86("x86_64_4", 4), x86("x86_64_5", 5), sv("sv39", 3), sv("sv48", 4))
  val hosts: Seq[PtFormat] = Seq(ept("ept4", 4), ept("ept5", 5), svx4("sv39x4", 3), svx4("sv48x4", 4))

  def guest(name: String): PtFormat = guests.find(_.name == name).getOrElse(
    throw new IllegalArgumentException(s"guest must be one of ${guests.map(_.name).mkString(", ")}, got '$name'")
  )
  def host(name: String): PtFormat = hosts.find(_.name == name).getOrElse(
    throw new IllegalArgumentException(s"host must be one of ${hosts.map(_.name).mkString(", ")}, got '$name'")
  )
}
