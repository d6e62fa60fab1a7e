package xlat.perforated

import chisel3._

/** A translation request (spec "Ports"). */
class PReq(p: PerforatedParams) extends Bundle {
  val id = UInt(p.idBits.W)
  val vpn = UInt(p.vpnBits.W)
  val asid = UInt(p.asidBits.W)
  /** CR3 page number (the PML4 page); not a tag. */
  val root = UInt(p.ppnBits.W)
  /** 0 read, 1 write, 2 execute, 3 reserved. */
  val cmd = UInt(2.W)
  val user = Bool()
}

object PFault {
  val None = 0
  val Page = 1
  val Bus = 3
  val Reserved = 4
}

object PSource {
  val Entry4k = 0
  val Entry2m = 1
  val Perforated = 2
  val Hole = 3
  val Walk = 4
}

class PResp(p: PerforatedParams) extends Bundle {
  val id = UInt(p.idBits.W)
  val fault = UInt(3.W)
  val ppn = UInt(p.ppnBits.W)
  val pageSize = UInt(2.W)
  val perm_r = Bool()
  val perm_w = Bool()
  val perm_x = Bool()
  val perm_u = Bool()
  val source = UInt(3.W)
  val memReads = UInt(4.W)
}

class PInval(p: PerforatedParams) extends Bundle {
  /** 0 all, 1 asid, 2 page, 3 frame. */
  val kind = UInt(2.W)
  val asid = UInt(p.asidBits.W)
  val vpn = UInt(p.vpnBits.W)
  /** A 2 MiB physical frame number (PA >> 21). */
  val frame = UInt(p.frameBits.W)
}

class InvalDoneValid extends Bundle {
  val valid = Bool()
}

/** Permissions as one 3-bit word: bit 2 W, bit 1 U, bit 0 X (R is always 1). */
object Wux {
  def of(pte: UInt): UInt = chisel3.util.Cat(pte(1), pte(2), !pte(63))
}

/** A 4 KiB entry (holes too). */
class E4k(p: PerforatedParams) extends Bundle {
  val asid = UInt(p.asidBits.W)
  val vpn = UInt(p.vpnBits.W)
  val ppn = UInt(p.ppnBits.W)
  val wux = UInt(3.W)
  val d = Bool()
}

/** A 2 MiB entry: ordinary or perforated (with its filter, its PD page for the shadow node, and
  * the PML4E & PDPTE permissions a hole's translation starts from).
  */
class E2m(p: PerforatedParams) extends Bundle {
  val asid = UInt(p.asidBits.W)
  val vpn2m = UInt((p.vpnBits - 9).W)
  /** 4 KiB frame of the base (low 9 bits 0). */
  val ppn = UInt(p.ppnBits.W)
  val wux = UInt(3.W)
  val d = Bool()
  val perforated = Bool()
  val filter = UInt(8.W)
  val pdPpn = UInt(p.ppnBits.W)
  val up = UInt(3.W)
}

/** A cached bitmap word, tagged by frame >> 6. */
class EBitmap(p: PerforatedParams) extends Bundle {
  val index = UInt(p.bmIndexBits.W)
  val word = UInt(64.W)
}

/** The tag of a cached bitmap word alone: the cache's flops when the words are in distributed
  * RAM beside it (PerforatedL2Tlb, `ramState`).
  */
class EBitmapTag(p: PerforatedParams) extends Bundle {
  val index = UInt(p.bmIndexBits.W)
}

object PwcKind {
  val L3 = 0 // PML4E, prefix vpn >> 27
  val L2 = 1 // PDPTE, prefix vpn >> 18
  val L1 = 2 // PDE pointer, prefix vpn >> 9
  val S = 3 // shadow entry, prefix vpn >> 9
  def shift(k: Int): Int = Seq(27, 18, 9, 9)(k)
}

/** A page-walk-cache entry: a pointer read by a walk, with the permissions accumulated through it. */
class EPwc(p: PerforatedParams) extends Bundle {
  val asid = UInt(p.asidBits.W)
  val kind = UInt(2.W)
  val prefix = UInt(27.W)
  val ppn = UInt(p.ppnBits.W)
  val wux = UInt(3.W)
}

/** Kinds of a walk slot's read (docs "Translation flow"; the model's READ_KINDS). */
object RdKind {
  val Pml4e = 0
  val Pdpte = 1
  val Pde = 2
  val Pte = 3
  val Bitmap = 4
  val Shadow = 5
  val Hole = 6
  val width = 3
}

/** A walk slot's request and where its walk stands (the model's `Walk`). */
class WalkState(p: PerforatedParams) extends Bundle {
  val id = UInt(p.idBits.W)
  val vpn = UInt(p.vpnBits.W)
  val asid = UInt(p.asidBits.W)
  val cmd = UInt(2.W)
  val user = Bool()
  /** The read outstanding (or to send). */
  val kind = UInt(RdKind.width.W)
  val addr = UInt(p.paBits.W)
  /** Permissions accumulated over the entries read so far. */
  val wux = UInt(3.W)
  val pdPpn = UInt(p.ppnBits.W)
  val up = UInt(3.W)
  /** The large page the request's page lies in (after its PD leaf or the 2 MiB hit). */
  val large = new E2m(p)
  val source = UInt(3.W)
  val reads = UInt(3.W)
  val hole = Bool()
}

object OpKind extends ChiselEnum {
  val Req, Step, Inval = Value
}

/** An operation on its way from acceptance to respond. A walk step carries its slot's asid and
  * vpn in `req`; an invalidation's sweep step its set index in `set4k` / `set2m`.
  */
class POp(p: PerforatedParams) extends Bundle {
  val kind = OpKind()
  val req = new PReq(p)
  val slot = UInt(p.slotBits.W)
  val rdata = UInt(64.W)
  val error = Bool()
  val inval = new PInval(p)
  /** The last step of an invalidation (its removal has landed after this one's respond). */
  val last = Bool()
  val set4k = UInt(p.setBits4k.max(1).W)
  val set2m = UInt(p.setBits2m.max(1).W)
  /** A walk step's bitmap-cache key: its bitmap read's word index (the key of the fill it
    * makes), else the word index of the PD leaf it carries (formed at acceptance, compared in
    * match).
    */
  val bmKey = UInt(p.bmIndexBits.W)
}

/** `dbg_*` ports (formal configuration): the valid bits and the slots. */
class PerforatedDbg(p: PerforatedParams) extends Bundle {
  val valid4k = UInt((p.sets4k * p.ways4k).W)
  val valid2m = UInt((p.sets2m * p.ways2m).W)
  val bitmapValid = UInt(p.bitmapEntries.W)
  val slotValid = UInt(p.walkers.W)
  val slotStale = UInt(p.walkers.W)
  val slotSent = UInt(p.walkers.W)
  val pipeEmpty = Bool()
  val invalCount = UInt(4.W)
  /** Every entry of both arrays (index set * ways + way) and of the bitmap cache, and every walk
    * slot's state: what the strengthening invariants of formal/perforated are stated on.
    */
  val entries4k = Vec(p.sets4k * p.ways4k, new E4k(p))
  val entries2m = Vec(p.sets2m * p.ways2m, new E2m(p))
  val bitmap = Vec(p.bitmapEntries, new EBitmap(p))
  val slots = Vec(p.walkers, new WalkState(p))
  /** The operations in the pipeline's stage registers (read, match, pick, decide: the formal
    * configuration has all four): kind (0 request, 1 walk step, 2 invalidation) and the
    * request's id.
    */
  val heldValid = Vec(4, Bool())
  val heldKind = Vec(4, UInt(2.W))
  val heldId = Vec(4, UInt(p.idBits.W))
  /** A walk step's slot (the stage registers'). */
  val heldSlot = Vec(4, UInt(p.slotBits.W))
  /** The response queue, head first (entry j is queued when j < respCount), and whether its
    * tail pointer is head + count.
    */
  val respq = Vec(p.respQueue, new PResp(p))
  val respCount = UInt(5.W)
  val respPtrOk = Bool()
  val sweeping = Bool()
  /** The slot's memory response was accepted (its step is in the pipeline). */
  val slotStep = UInt(p.walkers.W)
  /** The acceptance registers computed a cycle ahead equal what they stand for, and every write
    * in the stage registers has its write shadow left (formal/perforated I11).
    */
  val accOk = Bool()
  /** The miss queue, head first (entry j is queued when j < mqCount), and whether its pointers
    * and counts agree; a walk slot being handed to its head this cycle (`slotValid` leaves that
    * slot out: it still holds the ended walk's state).
    */
  val mq = Vec(p.missQueue, new WalkState(p))
  val mqCount = UInt(4.W)
  val mqPtrOk = Bool()
  val handValid = Bool()
  val handSlot = UInt(p.slotBits.W)
  /** Every slot's valid bit, the handed one included. */
  val slotBusy = UInt(p.walkers.W)
  /** With `bitmapSets` > 1: the set-associative bitmap cache's events in respond (a lookup's hit,
    * a fill) and the set of the operation there (the covers of formal/perforated).
    */
  val bmEvents = Option.when(p.bmSA)(new Bundle {
    val hit = Bool()
    val fill = Bool()
    val set = UInt(p.bmSetBits.max(1).W)
  })
}

/** What the decide stage computes for respond (registered): the operation's decision but the
  * perforated one (response, slot state and read, fills, touches, counter events), and for the
  * perforated decision its inputs (filter bit, the bitmap cache's hit, the page's bit of the
  * word) and each outcome's data (the translation through the large page, the slot's next state
  * for a bitmap read, the fields a hole changes).
  */
/** The parts of a walk step's checks, formed in match from the word and the slot's read kind. */
class PStepRaw extends Bundle {
  val kPml4e = Bool()
  val kPdpte = Bool()
  val kPde = Bool()
  val kShadow = Bool()
  val kBitmap = Bool()
  val kLeaf4 = Bool()
  /** A walk step without a bus error. */
  val sWord = Bool()
  val error = Bool()
  val notPresent = Bool()
  val rsvd = Bool()
  val ps = Bool()
  val accessed = Bool()
  val perfBit = Bool()
  /** The access is not allowed by the leaf's accumulated permissions (and D). */
  val deny = Bool()
  val permNew = UInt(3.W)
  val shadowWux = UInt(3.W)
}

/** An operation's flow, made in pick (see `PerforatedL2Tlb`): the perforated decision (`go`) or
  * a response (`rv`) and / or a read (`rd`), with the perforated decision's inputs known there.
  */
class PFlow extends Bundle {
  val go = Bool()
  val rv = Bool()
  val rd = Bool()
  val walk = Bool()
  val hit4k = Bool()
  val hit2m = Bool()
  /** The word is carried by the step (its bitmap read). */
  val known = Bool()
  /** The large page's filter bit of the page. */
  val filterBit = Bool()
}

/** A walk step's checks of the word it read, made in pick (the slot's read kind is known there)
  * and registered for decide.
  */
class PStepPre extends Bundle {
  val kPml4e = Bool()
  val kPdpte = Bool()
  val kPde = Bool()
  val kShadow = Bool()
  val kBitmap = Bool()
  /** A bitmap word read without error. */
  val sBitmap = Bool()
  /** A pointer read (PML4E, PDPTE, PDE pointer, shadow entry) that goes on to the next table. */
  val sPtr = Bool()
  /** A 2 MiB leaf with A = 1 (ordinary or perforated). */
  val sLeaf2 = Bool()
  /** A 4 KiB leaf (PTE, hole PTE) with A = 1. */
  val sLeaf4 = Bool()
  /** On to the perforated decision (a bitmap word, or a perforated leaf with A = 1). */
  val sGo = Bool()
  /** The step's fault code (0: none) when it answers. */
  val code = UInt(3.W)
  val permNew = UInt(3.W)
  val shadowWux = UInt(3.W)
}

class PDecide(p: PerforatedParams, pwcN: Int) extends Bundle {
  private def idx(n: Int) = UInt(chisel3.util.log2Ceil(n.max(1)).max(1).W)
  /** The operation goes on to the perforated decision (respond makes it). */
  val go = Bool()
  /** Without it: a response, and / or a read of the slot (`ns`). */
  val rv = Bool()
  val r = new PResp(p)
  val rd = Bool()
  val ns = new WalkState(p)
  /** With it: the translation through the large page (filter bit 0 or the word's bit clear) ... */
  val rTP = new PResp(p)
  /** ... the slot's state for a bitmap read, and what a hole changes in it. */
  val nsDec = new WalkState(p)
  val hSource = UInt(3.W)
  val hWux = UInt(3.W)
  val hKind = UInt(RdKind.width.W)
  val hAddr = UInt(p.paBits.W)
  val filterBit = Bool()
  /** The word is carried by the step (its bitmap read), not looked up. */
  val known = Bool()
  val bmAny = Bool()
  val bmIdx = idx(p.bmCmp)
  val wordBit = Bool()
  /** The PWC holds the page's shadow entry (entry `sIdx`). */
  val sAny = Bool()
  val sIdx = idx(pwcN)
  /** A walk starts from PWC entry `pwcIdx`. */
  val pwcTouch = Bool()
  val pwcIdx = idx(pwcN)
  val fill4k = Bool()
  val fill4kE = new E4k(p)
  val fill2m = Bool()
  val fill2mE = new E2m(p)
  val fillBm = Bool()
  val bmFillIdx = UInt(p.bmIndexBits.W)
  val fillPwc = Bool()
  val fillPwcE = new EPwc(p)
  val fillPwcSame = Vec(pwcN, Bool())
  val hit4k = Bool()
  val hit2m = Bool()
  val walk = Bool()
  val badCmd = Bool()
  /** Respond's selections, precomputed (see decide). */
  val skip = Bool()
  val lookup = Bool()
  val bmRead = Bool()
  val bmHit = Bool()
  /** The word (carried or cached) decides: its bit `wordBit` set is a hole, clear translates. */
  val inWord = Bool()
  /** A response leaves whatever the word's bit (`rv`, or filter bit 0). */
  val rvPre = Bool()
  /** The slot reads whatever the word's bit (`rd`, or a bitmap read). */
  val rdPre = Bool()
  /** A walk's start touches the PWC; `sTouch`: a hole would touch its shadow entry. */
  val pwcTouchPre = Bool()
  val sTouch = Bool()
}
