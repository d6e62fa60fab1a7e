package xlat.mmu

import xlat.babelfish.BabelFishParams
import xlat.common.{PtFormat, PtFormats, ReplacementKind, StorageKind}
import xlat.common.ParamCheck._
import xlat.pml.PmlParams
import xlat.walker.WalkerParams

/** Parameters of [[XlatMmu]]; see docs/xlat-mmu.md for their meaning.
  *
  * Every check names the parameter and its legal range (the blocks' own checks would name
  * their field, `sets`, not the MMU's `l1Sets`); the blocks' parameters are derived here.
  */
case class XlatMmuParams(
    guest: String = "sv48",
    host: String = "sv48x4",
    idBits: Int = 8,
    asidBits: Int = 16,
    vmidBits: Int = 14,
    ccidBits: Int = 12,
    pcBits: Int = 32,
    paBits: Int = 52,
    l1Sets: Int = 16,
    l1Ways: Int = 4,
    l1Superpages: Int = 8,
    l1Latency: Int = 4,
    l2Sets: Int = 128,
    l2Ways: Int = 12,
    l2Superpages: Int = 16,
    l2Storage: String = "sram",
    l2Latency: Int = 6,
    replacement: String = "plru",
    guestPwcEntries: Int = 16,
    hostPwcEntries: Int = 16,
    nestedTlbEntries: Int = 16,
    adUpdate: String = "hardware",
    pmlContexts: Int = 8,
    pmlEntries: Int = 512,
    pmlDedupEntries: Int = 0,
    pmlIdBits: Int = 4,
    /** `dbg_*` ports for the composed proofs ([[MmuDbg]]; mmu_formal only). */
    formalPorts: Boolean = false
) {
  require(PtFormats.guests.exists(_.name == guest), s"guest must be one of ${PtFormats.guests.map(_.name).mkString(", ")}, got '$guest'")
  require(PtFormats.hosts.exists(_.name == host), s"host must be one of ${PtFormats.hosts.map(_.name).mkString(", ")}, got '$host'")
  val g: PtFormat = PtFormats.guest(guest)
  val h: PtFormat = PtFormats.host(host)
  /** Guest-physical address width: the host format's input range. */
  val gpaBits: Int = h.inputBits

  range("idBits", idBits, 1, 16)
  range("asidBits", asidBits, 1, 16)
  // the TLBs' tag is {mode class (2 bits), vmid}: BabelFishTlb's vmidBits is at most 16
  range("vmidBits", vmidBits, 1, 14)
  range("ccidBits", ccidBits, 1, 16)
  range("pcBits", pcBits, 1, 64)
  // the PML log names guest-physical pages in a host-physical word: every GPA must fit
  range("paBits", paBits, gpaBits.max(32), 56)
  pow2("l1Sets", l1Sets, 1, 4096)
  range("l1Ways", l1Ways, 1, 32)
  range("l1Superpages", l1Superpages, 1, 64)
  range("l1Latency", l1Latency, 1, 4)
  pow2("l2Sets", l2Sets, 1, 4096)
  range("l2Ways", l2Ways, 1, 32)
  range("l2Superpages", l2Superpages, 1, 64)
  require(StorageKind.names.contains(l2Storage), s"l2Storage must be one of ${StorageKind.names.mkString(", ")}, got '$l2Storage'")
  if (l2Storage == "sram") range("l2Latency", l2Latency, 2, 6) else range("l2Latency", l2Latency, 1, 4)
  require(ReplacementKind.names.contains(replacement),
    s"replacement must be one of ${ReplacementKind.names.mkString(", ")}, got '$replacement'")
  range("guestPwcEntries", guestPwcEntries, 0, 64)
  range("hostPwcEntries", hostPwcEntries, 0, 64)
  range("nestedTlbEntries", nestedTlbEntries, 0, 64)
  require(adUpdate == "hardware" || adUpdate == "fault", s"adUpdate must be one of hardware, fault, got '$adUpdate'")
  range("pmlContexts", pmlContexts, 1, 64)
  require(1 << vmidBits >= pmlContexts, s"pmlContexts must be in 1..${1 << vmidBits} (2^vmidBits), got $pmlContexts")
  pow2("pmlEntries", pmlEntries, 2, 512)
  range("pmlDedupEntries", pmlDedupEntries, 0, 64)
  range("pmlIdBits", pmlIdBits, 1, 8)

  /** Page-number width the TLBs tag: a guest VA (stage 1, both) or a GPA (stage 2 only). */
  val vpnBits: Int = g.inputBits.max(gpaBits) - 12
  /** The TLBs' VMID tag: {mode class, vmid} (docs/xlat-mmu.md "Contexts in the TLBs"). */
  val ctxBits: Int = vmidBits + 2

  private def tlb(sets: Int, ways: Int, supers: Int, storage: String, latency: Int) = BabelFishParams(
    sets = sets, ways = ways, superpageEntries = supers, vpnBits = vpnBits, ppnBits = paBits - 12,
    pcidBits = asidBits, ccidBits = ccidBits, pcBits = pcBits, vmidBits = ctxBits,
    sharing = false, replacement = replacement, storage = storage, latency = latency)
  val l1: BabelFishParams = tlb(l1Sets, l1Ways, l1Superpages, "flops", l1Latency)
  val l2: BabelFishParams = tlb(l2Sets, l2Ways, l2Superpages, l2Storage, l2Latency)
  /** One walk at a time (the sequencer serves one request), so one walk slot and a 1-bit id. */
  val walker: WalkerParams = WalkerParams(
    guest = guest, host = host, walkers = 1, guestPwcEntries = guestPwcEntries, hostPwcEntries = hostPwcEntries,
    nestedTlbEntries = nestedTlbEntries, adUpdate = adUpdate, idBits = 1, asidBits = asidBits, vmidBits = vmidBits,
    paBits = paBits)
  /** vaBits 64: PmlLogger takes the walker's 52-bit GVA page number whole. */
  val pml: PmlParams = PmlParams(
    contexts = pmlContexts, paBits = paBits, vaBits = 64, entries = pmlEntries,
    dedupEntries = pmlDedupEntries, idBits = pmlIdBits, vmidBits = vmidBits, asidBits = asidBits)
  /** Root page numbers as the walker takes them. */
  val s1RootBits: Int = walker.rootBits - 12
  val s2RootBits: Int = paBits - 12
  /** The merged memory port's id: the source (0 walker, 1 PML) above the wider source id. */
  val memIdBits: Int = walker.idBits.max(pmlIdBits) + 1

  def derived: Seq[(String, Any)] = Seq(
    "gpaBits" -> gpaBits,
    "vpnBits" -> vpnBits,
    "ctxBits" -> ctxBits,
    "guestLevels" -> g.levels,
    "hostLevels" -> h.levels,
    "s1RootBits" -> s1RootBits,
    "s2RootBits" -> s2RootBits,
    "memIdBits" -> memIdBits,
    "walkerIdBits" -> walker.idBits,
    "l1LookupLatency" -> l1Latency,
    "l2LookupLatency" -> l2Latency,
    "csrMmuBase" -> MmuRegs.base,
    "csrCounterBase" -> MmuRegs.counterBase,
    "csrApply" -> MmuCsr.applyCycle,
    "csrLatency" -> MmuCsr.latency
  )
}
