// Formal property wrapper for NestedWalker (formal/walker/walker.sby), configuration
// walker_formal (sv39 over sv39x4, 2 walk slots, 2 entries per cache, idBits 2, asid/vmid 2 bits,
// paBits 32, hardware A/D, dbg ports).
//
// Behaviour reference: docs/nested-walker.md; properties: spec nested-walker.md "Properties to
// prove". Sizes come from build/rtl/walker_formal/params.svh. The dbg_* ports are bound by name,
// so this wrapper is for walkers = 2 and 2 entries per cache (checked below). Results of the
// functions below are always taken through continuous assignments: Yosys may leave the result of
// a function called inside a conditional always @* block undriven (the flow then makes it free).
//
// Method
//   * Every DUT input is free ($anyseq) in every cycle, except that reset is high in the first
//     cycle (later it is free: mid-run resets) and no channel is valid while reset is high.
//     Memory is an unconstrained responder: mem_resp valid / id / rdata / error are free
//     (responses for ids with nothing outstanding, early, late or never are all allowed; the RTL
//     drops and counts unknown ids, cover C11).
//   * Ghost state kept here: the ids in flight (and each request's cmd / user / vmid / asid),
//     per slot "a flush covering this walk happened while it was in flight", per cache entry
//     "valid at a covering flush and not refilled since" (stale).
//   * `define LIVE (walker_prove_live) adds fairness assumptions F and the liveness assertions L;
//     `define SAFETY_AS_ASSUME turns every safety property and invariant below into an
//     assumption there (they are proven by walker_prove_safety in a free environment, of which
//     the fair one is a restriction).
//
// Safety properties (walker_prove_safety, k-induction)
//   P1  bounded accesses: a busy slot's dbg_slotReads <= maxReads and dbg_slotWrites <=
//       maxWrites; a response's memReads <= maxReads, memWrites <= maxWrites
//   P2  one response per accepted request: a request is never accepted for an id in flight; a
//       response is offered only for an id in flight (the response clears it, so a second
//       response for one request fails); "at least one" is L3
//   P3  no response with an id that is not in flight (P2's response half, on resp_valid)
//   P4  a fault response carries no translation: ppn, pageSize, guestPageSize, hostPageSize and
//       perm_r/w/x/u are 0
//   P5  host permissions limit the result: a success response has no perm_r/w/x that the host
//       permission of its mapping (dbg_respHostPerm) lacks
//   P5b a success response permits the request's access: cmd is not 3; read -> perm_r (unless
//       the request's mxr or vmxr let the guest's X stand for R: the response's perm is guest AND
//       host, so it cannot show that), write -> perm_w, exec -> perm_x (both checks passed)
//   P6  flushes. (a) An entry valid at a flush covering it (kind 0/3: all; kind 1: its vmid;
//       kind 2: guest PWC entries of vmid+asid) stays invalid until refilled: no valid entry is
//       stale. (b) A walk in flight at a flush covering its vmid (guest PWC: vmid+asid) fills no
//       entry of that cache, in the flush's cycle or later. (c) Every cache hit of the step
//       engine uses a valid, non-stale entry of the walk's vmid (guest PWC: and asid). (d) An
//       entry only becomes valid the cycle after a fill of its cache wrote it (dbg_fillWay;
//       a fill refreshing the entry that holds its key, cover C12, is tracked the same way). Together: after a flush of
//       vmid v, no entry of v that existed at the flush, or that a walk in flight at the flush
//       read, is ever used.
//   P7  A/D locks (one per leaf address): dbg_lockHeld[i] iff slot i is in its read-modify-write
//       (ReadLocked, WriteAd, MemWait for the locked read or the A/D write); never two slots
//       with the same entry address (dbg_slotPteAddr) at once, so no update is lost between two
//       walks setting A/D on one entry
//   P8  memory requests carry an id in flight; reads have wmask 0, A/D writes one byte
//   T   channel rule: resp, mem_req and dirty keep valid and their bits until ready
//   P9  modes (req_bits_mode free, every TransMode): a guest PWC hit (dbg_hitCache 1) is by a walk
//       that is not stage-2-only, on an entry whose stage-1-only bit (dbg_hitS1) is the walk's
//       (a stage-1-only entry's table is host-physical, a 2D one's guest-physical: neither
//       answers the other); host PWC and nested TLB hits are by stage-2-only or 2D walks only
//   P10 a bare-mode request (mode 0, bad input) is answered with fault 4 and no memory access
// Strengthening invariants (asserted, so proven too)
//   I1  slot states are legal encodings (<= Done); dbg_slotBusy == state != Idle
//   I2  ghost in-flight set == ids of busy slots; busy slots have distinct ids; a busy slot's
//       cmd / user / vmid / asid are its request's
//   I3  guest level <= top level in every busy state but Done; host level <= top level in the
//       host states; a pending dirty event (Dirty, or an A/D write with dirtyOnWrite) is a host one
//   I4  reads / writes so far <= a bound from the walk position (state, levels, forData, adHost,
//       memKind): ub_reads / ub_writes; their value at Done is maxReads / maxWrites
//   I5  a walk flagged by a covering flush has noFill set
//   I7  the engine's registered choice: when it serves a slot, its round robin's last grant is
//       that slot; a lookup turn past its match (phase 1, 2, 3) is on a slot in a lookup state;
//       the one-hot choice (registered a cycle ahead) is the round robin's on the states now
//       without the slots another writer took into an engine state in the cycle before (they
//       are candidates a cycle later), and the registered "engine stays on the served slot" is
//       the lookup's phase's (dbg_engOk)
//   I8  the step engine's registered turn decisions: a slot served by the engine has the decision
//       of its current registers (dbg_decOk; the RTL registers each slot's decision a cycle
//       ahead, or after its own turn the decision of the state that turn leads to)
//   I9  the response's, the memory port's and the dirty events' registered choices (computed a cycle ahead) are
//       consistent with the slots' states: at most one slot, one that asks, one whenever any
//       asks; the memory port's per-slot "in WriteAd" registers are the slots' states; the
//       acceptance's per-slot idle registers are the slots' states (dbg_chanOk)
//   I10 while the engine serves a slot, the key its lookups and fills compare (registered with
//       the engine's choice) is the slot's (dbg_keyOk)
//   I11 for a slot in Lock and a slot holding a lock, the registered compare of their entry
//       addresses equals the compare of their addresses now (dbg_lockOk)
//   I12 a bare-mode walk is in Start, or in Done with fault 4, with no access so far
//   I14 one copy per key in each cache (dbg_dupOk): no two entries hold one key (an entry
//       with a pending write counted with the data written), and a landing fill finds at most
//       one entry holding its key (the RTL takes that vector as the landing's one-hot entry)
//   I13 a stage-1-only walk keeps the host permission whole and never reaches a host state past
//       HostStart; a stage-2-only walk keeps the guest permission whole, never reaches a guest
//       state and is on its data access (forData) from Start's turn to Done; a busy slot's
//       mode is its request's (with I2)
//   I6  the guest permission allows the access once the guest leaf passed its check; the host
//       permission allows it once the data access's host leaf passed (host A/D, Dirty,
//       HostLeafDone of the data access); both in Done without fault; cmd 3 only in Start/Done
//
// Liveness (walker_prove_live, k-induction; FAIR_K = 2)
//   F   fairness assumptions: no reset after the first cycle; the memory answers every
//       outstanding access at the latest FAIR_K cycles after the cycle following its request
//       (other responses stay free); mem_req_ready, resp_ready and dirty_ready are never low for
//       more than FAIR_K cycles in a row while the matching valid is high
//   L0  (invariants) outstanding accesses == ids of slots in MemWait, their age == the slot's
//       stay; a slot waiting for the lock has waited at most as long as the holder has held it
//   L1  a slot stays in a state at most T cycles (after entering it): engine states 8, issue /
//       Dirty / Done 2*FAIR_K+1 (ReadLocked / WriteAd one more: entered by the lock's grant or a
//       response, not a candidate of the port's choice ahead in their first cycle), MemWait
//       FAIR_K, Lock the holder's whole read-modify-write
//   L2  a walk changes state at most STEP_MAX (84) times before Done: position bound ub_pos
//   L3  every accepted walk answers: a busy slot's age (cycles since acceptance) is at most
//       steps*(T_MAX+1) + stay, hence at most WALK_MAX = (STEP_MAX+1)*(T_MAX+1) (1785 cycles
//       for FAIR_K = 2); the slot only leaves Done by its response
//
// Covers (walker_cover, walker_cover_walks; walker_cover_live with the liveness assumptions):
// end of the file.
`default_nettype none

module walker_fv (
  input wire clock
);
`include "params.svh"

  localparam W    = P_WALKERS;
  localparam IB   = P_ID_BITS;
  localparam NID  = 1 << IB;
  localparam AB   = P_ASID_BITS;
  localparam VB   = P_VMID_BITS;
  localparam GPNB = P_GPA_BITS - 12;
  localparam PPNB = P_PA_BITS - 12;
  localparam GTOP = P_GUEST_LEVELS - 1;
  localparam HTOP = P_HOST_LEVELS - 1;
  localparam MAXR = P_MAX_READS;
  localparam MAXW = P_MAX_WRITES;

  generate
    if (W != 2 || P_GUEST_PWC_ENTRIES != 2 || P_HOST_PWC_ENTRIES != 2 || P_NESTED_TLB_ENTRIES != 2) begin : g_err_cfg
      $error("walker_fv: binds the dbg ports of 2 walkers and 2 entries per cache (walker_formal)");
    end
    if (P_FORMAL_PORTS == 0) begin : g_err_dbg
      $error("walker_fv: the configuration has no dbg_* ports");
    end
    if (MAXR != (GTOP + 1) * (HTOP + 3) + 1 + HTOP + 2 || MAXW != GTOP + 3) begin : g_err_bound
      $error("walker_fv: maxReads / maxWrites do not match the position bounds of this wrapper");
    end
  endgenerate

  // WalkState encodings (rtl/src/main/scala/xlat/walker/WalkSlot.scala, in declaration order)
  localparam [3:0] S_IDLE = 4'd0, S_START = 4'd1, S_HSTART = 4'd2, S_HENTRY = 4'd3, S_HLDONE = 4'd4,
                   S_GENTRY = 4'd5, S_GLDONE = 4'd6, S_RDHOST = 4'd7, S_RDGUEST = 4'd8, S_LOCK = 4'd9,
                   S_RDLOCK = 4'd10, S_WRAD = 4'd11, S_MEMWAIT = 4'd12, S_DIRTY = 4'd13, S_DONE = 4'd14;
  localparam [1:0] MK_HOST = 2'd0, MK_GUEST = 2'd1, MK_LOCKED = 2'd2, MK_WRITE = 2'd3;

  // ------------------------------------------------------------------ free inputs
  (* anyseq *) reg            reset;
  (* anyseq *) reg            req_valid;
  (* anyseq *) reg [IB-1:0]   req_bits_id;
  (* anyseq *) reg [63:0]     req_bits_gva;
  (* anyseq *) reg [AB-1:0]   req_bits_asid;
  (* anyseq *) reg [VB-1:0]   req_bits_vmid;
  (* anyseq *) reg [GPNB-1:0] req_bits_gRoot;
  (* anyseq *) reg [PPNB-1:0] req_bits_hRoot;
  (* anyseq *) reg [1:0]      req_bits_cmd;
  (* anyseq *) reg            req_bits_user;
  (* anyseq *) reg [1:0]      req_bits_mode;      // every TransMode, bare (bad input) included
  (* anyseq *) reg [6:0]      req_flags;      // {nxe, smap, smep, wp, vmxr, mxr, sum}
  (* anyseq *) reg            resp_ready;
  (* anyseq *) reg            mem_req_ready;
  (* anyseq *) reg            mem_resp_valid;
  (* anyseq *) reg [IB-1:0]   mem_resp_bits_id;
  (* anyseq *) reg [63:0]     mem_resp_bits_rdata;
  (* anyseq *) reg            mem_resp_bits_error;
  (* anyseq *) reg            dirty_ready;
  (* anyseq *) reg            flush_valid;
  (* anyseq *) reg [1:0]      flush_bits_kind;
  (* anyseq *) reg [VB-1:0]   flush_bits_vmid;
  (* anyseq *) reg [AB-1:0]   flush_bits_asid;

  // ------------------------------------------------------------------ DUT
  wire            req_ready, resp_valid, mem_req_valid, mem_resp_ready, dirty_valid, flush_ready;
  wire [IB-1:0]   resp_bits_id;
  wire [2:0]      resp_bits_fault, resp_bits_faultLevel;
  wire            resp_bits_faultStage;
  wire [63:0]     resp_bits_faultGpa;
  wire [PPNB-1:0] resp_bits_ppn;
  wire [1:0]      resp_bits_pageSize, resp_bits_guestPageSize, resp_bits_hostPageSize;
  wire            resp_bits_perm_r, resp_bits_perm_w, resp_bits_perm_x, resp_bits_perm_u;
  wire [7:0]      resp_bits_memReads, resp_bits_memWrites;
  wire [IB-1:0]   mem_req_bits_id;
  wire [P_PA_BITS-1:0] mem_req_bits_addr;
  wire            mem_req_bits_write;
  wire [63:0]     mem_req_bits_wdata;
  wire [7:0]      mem_req_bits_wmask;
  wire [GPNB-1:0] dirty_bits_gpa;
  wire [51:0]     dirty_bits_gva;
  wire [VB-1:0]   dirty_bits_vmid;
  wire [AB-1:0]   dirty_bits_asid;
  wire            dirty_bits_pageTable;
  wire [31:0]     perf_walks, perf_memReads, perf_memWrites, perf_guestPwcHits, perf_hostPwcHits,
                  perf_nestedTlbHits, perf_faults, perf_busErrors, perf_dirtyEvents, perf_hugeGuest,
                  perf_hugeAligned, perf_splintered, perf_flushes, perf_badFlushes, perf_badMemResps,
                  perf_idStalls, perf_badModes;
  // dbg, packed per slot (slot i at [i*w +: w]) / per entry
  wire [W-1:0]    d_busy, d_noFill, d_memWait, d_forData, d_adHost, d_user, d_dow;
  wire [W*7-1:0]  d_flags;
  wire [W*IB-1:0] d_id;
  wire [W*8-1:0]  d_reads, d_writes;
  wire [W*4-1:0]  d_state;
  wire [W*3-1:0]  d_gl, d_hl, d_fault;
  wire [W*2-1:0]  d_mk, d_cmd;
  wire [W*VB-1:0] d_vmid;
  wire [W*AB-1:0] d_asid;
  wire [W*4-1:0]  d_gperm, d_hperm;            // {u, x, w, r}
  wire [W-1:0]    d_lockHeld, d_needD;
  wire [W*P_PA_BITS-1:0] d_pte;
  wire [1:0]      d_gValid, d_hValid, d_tValid;
  wire [2*VB-1:0] d_gVmid, d_hVmid, d_tVmid;
  wire [2*AB-1:0] d_gAsid;
  wire [1:0]      d_hitCache, d_fillCache;
  wire [W*2-1:0]  d_mode;                      // per slot its request's TransMode
  wire [1:0]      d_gS1;                       // per guest PWC entry: made by a stage-1-only walk
  wire            d_hitS1;                     // the guest PWC entry a hit (d_hitCache 1) uses
  wire [5:0]      d_fillWay;
  wire [VB-1:0]   d_hitVmid;
  wire            d_fillValid, d_fillSlot, d_engSlot;
  wire            d_engValid, d_engOk, d_keyOk, d_lockOk;
  wire [1:0]      d_engAfter, d_lookPhase, d_decOk;
  wire [3:0]      d_chanOk;
  wire [2:0]      d_dupOk;                     // per cache: one copy per key (I14)
  wire            d_fillDup;                   // the fill shown writes the entry holding its key
  wire            d_rhp_r, d_rhp_w, d_rhp_x, d_rhp_u;

  NestedWalker dut (
    .clock(clock), .reset(reset),
    .req_ready(req_ready), .req_valid(req_valid), .req_bits_id(req_bits_id), .req_bits_gva(req_bits_gva),
    .req_bits_asid(req_bits_asid), .req_bits_vmid(req_bits_vmid), .req_bits_gRoot(req_bits_gRoot),
    .req_bits_hRoot(req_bits_hRoot), .req_bits_cmd(req_bits_cmd), .req_bits_user(req_bits_user),
    .req_bits_mode(req_bits_mode),
    .req_bits_flags_sum(req_flags[0]), .req_bits_flags_mxr(req_flags[1]), .req_bits_flags_vmxr(req_flags[2]),
    .req_bits_flags_wp(req_flags[3]), .req_bits_flags_smep(req_flags[4]), .req_bits_flags_smap(req_flags[5]),
    .req_bits_flags_nxe(req_flags[6]),
    .resp_ready(resp_ready), .resp_valid(resp_valid), .resp_bits_id(resp_bits_id),
    .resp_bits_fault(resp_bits_fault), .resp_bits_faultLevel(resp_bits_faultLevel),
    .resp_bits_faultStage(resp_bits_faultStage), .resp_bits_faultGpa(resp_bits_faultGpa),
    .resp_bits_ppn(resp_bits_ppn), .resp_bits_pageSize(resp_bits_pageSize),
    .resp_bits_guestPageSize(resp_bits_guestPageSize), .resp_bits_hostPageSize(resp_bits_hostPageSize),
    .resp_bits_perm_r(resp_bits_perm_r), .resp_bits_perm_w(resp_bits_perm_w),
    .resp_bits_perm_x(resp_bits_perm_x), .resp_bits_perm_u(resp_bits_perm_u),
    .resp_bits_memReads(resp_bits_memReads), .resp_bits_memWrites(resp_bits_memWrites),
    .mem_req_ready(mem_req_ready), .mem_req_valid(mem_req_valid), .mem_req_bits_id(mem_req_bits_id),
    .mem_req_bits_addr(mem_req_bits_addr), .mem_req_bits_write(mem_req_bits_write),
    .mem_req_bits_wdata(mem_req_bits_wdata), .mem_req_bits_wmask(mem_req_bits_wmask),
    .mem_resp_ready(mem_resp_ready), .mem_resp_valid(mem_resp_valid), .mem_resp_bits_id(mem_resp_bits_id),
    .mem_resp_bits_rdata(mem_resp_bits_rdata), .mem_resp_bits_error(mem_resp_bits_error),
    .dirty_ready(dirty_ready), .dirty_valid(dirty_valid), .dirty_bits_gpa(dirty_bits_gpa),
    .dirty_bits_gva(dirty_bits_gva), .dirty_bits_vmid(dirty_bits_vmid), .dirty_bits_asid(dirty_bits_asid),
    .dirty_bits_pageTable(dirty_bits_pageTable),
    .flush_ready(flush_ready), .flush_valid(flush_valid), .flush_bits_kind(flush_bits_kind),
    .flush_bits_vmid(flush_bits_vmid), .flush_bits_asid(flush_bits_asid),
    .perf_walks(perf_walks), .perf_memReads(perf_memReads), .perf_memWrites(perf_memWrites),
    .perf_guestPwcHits(perf_guestPwcHits), .perf_hostPwcHits(perf_hostPwcHits),
    .perf_nestedTlbHits(perf_nestedTlbHits), .perf_faults(perf_faults), .perf_busErrors(perf_busErrors),
    .perf_dirtyEvents(perf_dirtyEvents), .perf_hugeGuest(perf_hugeGuest), .perf_hugeAligned(perf_hugeAligned),
    .perf_splintered(perf_splintered), .perf_flushes(perf_flushes), .perf_badFlushes(perf_badFlushes),
    .perf_badMemResps(perf_badMemResps), .perf_idStalls(perf_idStalls), .perf_badModes(perf_badModes),
    .dbg_slotMode_0(d_mode[0 +: 2]), .dbg_slotMode_1(d_mode[2 +: 2]),
    .dbg_gpwcS1_0(d_gS1[0]), .dbg_gpwcS1_1(d_gS1[1]), .dbg_hitS1(d_hitS1),
    .dbg_slotBusy_0(d_busy[0]), .dbg_slotBusy_1(d_busy[1]),
    .dbg_slotId_0(d_id[0*IB +: IB]), .dbg_slotId_1(d_id[1*IB +: IB]),
    .dbg_slotReads_0(d_reads[0 +: 8]), .dbg_slotReads_1(d_reads[8 +: 8]),
    .dbg_slotWrites_0(d_writes[0 +: 8]), .dbg_slotWrites_1(d_writes[8 +: 8]),
    .dbg_slotNoFill_0(d_noFill[0]), .dbg_slotNoFill_1(d_noFill[1]),
    .dbg_slotMemWait_0(d_memWait[0]), .dbg_slotMemWait_1(d_memWait[1]),
    .dbg_lockHeld_0(d_lockHeld[0]), .dbg_lockHeld_1(d_lockHeld[1]),
    .dbg_slotPteAddr_0(d_pte[0 +: P_PA_BITS]), .dbg_slotPteAddr_1(d_pte[P_PA_BITS +: P_PA_BITS]),
    .dbg_slotAdNeedD_0(d_needD[0]), .dbg_slotAdNeedD_1(d_needD[1]),
    .dbg_gpwcValid_0(d_gValid[0]), .dbg_gpwcValid_1(d_gValid[1]),
    .dbg_gpwcVmid_0(d_gVmid[0 +: VB]), .dbg_gpwcVmid_1(d_gVmid[VB +: VB]),
    .dbg_hpwcValid_0(d_hValid[0]), .dbg_hpwcValid_1(d_hValid[1]),
    .dbg_hpwcVmid_0(d_hVmid[0 +: VB]), .dbg_hpwcVmid_1(d_hVmid[VB +: VB]),
    .dbg_ntlbValid_0(d_tValid[0]), .dbg_ntlbValid_1(d_tValid[1]),
    .dbg_ntlbVmid_0(d_tVmid[0 +: VB]), .dbg_ntlbVmid_1(d_tVmid[VB +: VB]),
    .dbg_hitCache(d_hitCache), .dbg_hitVmid(d_hitVmid),
    .dbg_fillValid(d_fillValid), .dbg_fillSlot(d_fillSlot),
    .dbg_respHostPerm_r(d_rhp_r), .dbg_respHostPerm_w(d_rhp_w), .dbg_respHostPerm_x(d_rhp_x),
    .dbg_respHostPerm_u(d_rhp_u),
    .dbg_slotState_0(d_state[0 +: 4]), .dbg_slotState_1(d_state[4 +: 4]),
    .dbg_slotGLevel_0(d_gl[0 +: 3]), .dbg_slotGLevel_1(d_gl[3 +: 3]),
    .dbg_slotHLevel_0(d_hl[0 +: 3]), .dbg_slotHLevel_1(d_hl[3 +: 3]),
    .dbg_slotForData_0(d_forData[0]), .dbg_slotForData_1(d_forData[1]),
    .dbg_slotAdHost_0(d_adHost[0]), .dbg_slotAdHost_1(d_adHost[1]),
    .dbg_slotMemKind_0(d_mk[0 +: 2]), .dbg_slotMemKind_1(d_mk[2 +: 2]),
    .dbg_slotVmid_0(d_vmid[0 +: VB]), .dbg_slotVmid_1(d_vmid[VB +: VB]),
    .dbg_slotAsid_0(d_asid[0 +: AB]), .dbg_slotAsid_1(d_asid[AB +: AB]),
    .dbg_slotCmd_0(d_cmd[0 +: 2]), .dbg_slotCmd_1(d_cmd[2 +: 2]),
    .dbg_slotUser_0(d_user[0]), .dbg_slotUser_1(d_user[1]),
    .dbg_slotFault_0(d_fault[0 +: 3]), .dbg_slotFault_1(d_fault[3 +: 3]),
    .dbg_slotDirtyOnWrite_0(d_dow[0]), .dbg_slotDirtyOnWrite_1(d_dow[1]),
    .dbg_slotGPerm_0_r(d_gperm[0]), .dbg_slotGPerm_0_w(d_gperm[1]), .dbg_slotGPerm_0_x(d_gperm[2]),
    .dbg_slotGPerm_0_u(d_gperm[3]),
    .dbg_slotGPerm_1_r(d_gperm[4]), .dbg_slotGPerm_1_w(d_gperm[5]), .dbg_slotGPerm_1_x(d_gperm[6]),
    .dbg_slotGPerm_1_u(d_gperm[7]),
    .dbg_slotHPerm_0_r(d_hperm[0]), .dbg_slotHPerm_0_w(d_hperm[1]), .dbg_slotHPerm_0_x(d_hperm[2]),
    .dbg_slotHPerm_0_u(d_hperm[3]),
    .dbg_slotHPerm_1_r(d_hperm[4]), .dbg_slotHPerm_1_w(d_hperm[5]), .dbg_slotHPerm_1_x(d_hperm[6]),
    .dbg_slotHPerm_1_u(d_hperm[7]),
    .dbg_gpwcAsid_0(d_gAsid[0 +: AB]), .dbg_gpwcAsid_1(d_gAsid[AB +: AB]),
    .dbg_engSlot(d_engSlot), .dbg_engValid(d_engValid), .dbg_engAfter_0(d_engAfter[0]),
    .dbg_engAfter_1(d_engAfter[1]), .dbg_engOk(d_engOk), .dbg_lookPhase(d_lookPhase), .dbg_decOk(d_decOk), .dbg_chanOk(d_chanOk), .dbg_keyOk(d_keyOk), .dbg_lockOk(d_lockOk), .dbg_fillCache(d_fillCache), .dbg_fillWay(d_fillWay),
    .dbg_dupOk(d_dupOk), .dbg_fillDup(d_fillDup),
    .dbg_slotFlags_0_sum(d_flags[0]), .dbg_slotFlags_0_mxr(d_flags[1]), .dbg_slotFlags_0_vmxr(d_flags[2]),
    .dbg_slotFlags_0_wp(d_flags[3]), .dbg_slotFlags_0_smep(d_flags[4]), .dbg_slotFlags_0_smap(d_flags[5]),
    .dbg_slotFlags_0_nxe(d_flags[6]),
    .dbg_slotFlags_1_sum(d_flags[7]), .dbg_slotFlags_1_mxr(d_flags[8]), .dbg_slotFlags_1_vmxr(d_flags[9]),
    .dbg_slotFlags_1_wp(d_flags[10]), .dbg_slotFlags_1_smep(d_flags[11]), .dbg_slotFlags_1_smap(d_flags[12]),
    .dbg_slotFlags_1_nxe(d_flags[13])
  );

  // safety properties and invariants: asserted (prove_safety, cover), or assumed in prove_live
`ifdef SAFETY_AS_ASSUME
  `define SAFE(x) assume (x)
`else
  `define SAFE(x) assert (x)
`endif

  // ------------------------------------------------------------------ environment
  reg f_past_valid = 1'b0;
  always @(posedge clock) f_past_valid <= 1'b1;
  wire live = f_past_valid && !reset;          // checks run in cycles after the first, out of reset

  always @* begin
    if (!f_past_valid) assume (reset);
    if (reset) assume (!req_valid && !mem_resp_valid && !flush_valid);
  end

  wire req_fire   = req_valid && req_ready;
  wire resp_fire  = resp_valid && resp_ready;
  wire mreq_fire  = mem_req_valid && mem_req_ready;
  wire dirty_fire = dirty_valid && dirty_ready;
  wire flush_fire = flush_valid && flush_ready;
  wire flush_all  = flush_bits_kind == 2'd0 || flush_bits_kind == 2'd3;

  // ------------------------------------------------------------------ helpers
  function automatic is_host_state(input [3:0] s, input [1:0] mk, input ah);
    // the slot is translating its `target` through the host table (HostStart .. HostLeafDone)
    is_host_state = s == S_HSTART || s == S_RDHOST || s == S_HENTRY || s == S_HLDONE || s == S_DIRTY ||
                    (s == S_MEMWAIT && mk == MK_HOST) ||
                    (ah && (s == S_LOCK || s == S_RDLOCK || s == S_WRAD ||
                            (s == S_MEMWAIT && (mk == MK_LOCKED || mk == MK_WRITE))));
  endfunction
  // the slot holds the A/D lock (its read-modify-write is under way)
  function automatic holds_lock(input [3:0] s, input [1:0] mk);
    holds_lock = s == S_RDLOCK || s == S_WRAD || (s == S_MEMWAIT && (mk == MK_LOCKED || mk == MK_WRITE));
  endfunction
  // upper bound on the reads a walk at this position has issued (I4). Per guest level above the
  // current one: H plain + 1 locked host reads and the guest entry (HTOP + 3); the guest leaf's
  // locked read (1); within a host translation: HTOP - hl plain reads before level hl.
  function automatic [7:0] ub_reads(input [3:0] s, input [2:0] gl, input [2:0] hl, input fd, input ah,
                                    input [1:0] mk);
    reg [7:0] bg, bh, hx;
    begin
      bg = (HTOP + 3) * (GTOP - gl);                            // before this guest level's entry
      bh = fd ? (HTOP + 3) * (GTOP - gl + 1) + 1 : bg;         // before this host translation
      hx = bh + HTOP - hl;                                      // before reading host level hl
      case (s)
        S_IDLE, S_START: ub_reads = 8'd0;
        S_HSTART:        ub_reads = bh;
        S_RDHOST:        ub_reads = hx;
        S_HENTRY:        ub_reads = hx + 8'd1;
        S_HLDONE, S_DIRTY: ub_reads = hx + 8'd2;
        S_LOCK, S_RDLOCK: ub_reads = ah ? hx + 8'd1 : bg + HTOP + 3;
        S_WRAD:          ub_reads = ah ? hx + 8'd2 : bg + HTOP + 4;
        S_MEMWAIT:       ub_reads = mk == MK_HOST ? hx + 8'd1 : mk == MK_GUEST ? bg + HTOP + 3 :
                                    ah ? hx + 8'd2 : bg + HTOP + 4;
        S_RDGUEST:       ub_reads = bg + HTOP + 2;
        S_GENTRY:        ub_reads = bg + HTOP + 3;
        S_GLDONE:        ub_reads = bg + HTOP + 4;
        default:         ub_reads = MAXR;                       // Done
      endcase
    end
  endfunction
  // upper bound on the writes so far: one per host translation (host leaf A/D), one guest leaf
  function automatic [7:0] ub_writes(input [3:0] s, input [2:0] gl, input fd, input ah, input [1:0] mk);
    reg [7:0] bg, bh;
    begin
      bg = GTOP - gl + 1;                                       // guest states of level gl
      bh = fd ? GTOP - gl + 2 : GTOP - gl;                      // before this host translation
      case (s)
        S_IDLE, S_START: ub_writes = 8'd0;
        S_HSTART, S_RDHOST, S_HENTRY: ub_writes = bh;
        S_HLDONE, S_DIRTY: ub_writes = bh + 8'd1;
        S_LOCK, S_RDLOCK, S_WRAD: ub_writes = ah ? bh : bg;
        S_MEMWAIT:       ub_writes = mk == MK_HOST ? bh : mk == MK_GUEST ? bg :
                                     mk == MK_LOCKED ? (ah ? bh : bg) : (ah ? bh + 8'd1 : bg + 8'd1);
        S_RDGUEST, S_GENTRY: ub_writes = bg;
        S_GLDONE:        ub_writes = bg + 8'd1;
        default:         ub_writes = MAXW;
      endcase
    end
  endfunction
  // the guest permission allows the access: RISC-V stage 1 (walker_formal is Sv39 over
  // Sv39x4; docs/privcheck.md rules 1-5): U-mode needs U; S-mode on a U page only loads /
  // stores with SUM; a load needs R, or X with mxr, or with vmxr when stage 1 is the VS-stage
  // (a 2D walk; not a stage-1-only walk, `s1`); a store W, a fetch X
  function automatic g_allows(input [3:0] p, input [1:0] cmd, input user, input [6:0] f, input s1);   // p = {u, x, w, r}
    g_allows = (user ? p[3] : (!p[3] || (f[0] && cmd != 2'd2))) &&
               (cmd == 2'd0 ? (p[0] || ((f[1] || (f[2] && !s1)) && p[2])) : cmd == 2'd1 ? p[1] : cmd == 2'd2 ? p[2] : 1'b0);
  endfunction
  // the host permission allows the data access: a write needs W, a fetch X, a read R, or X
  // with the HS-level MXR (`mxr`, flag bit 1; vsstatus.MXR does not reach the G-stage)
  function automatic h_allows(input [3:0] p, input [1:0] cmd, input mxr);
    h_allows = cmd == 2'd1 ? p[1] : cmd == 2'd2 ? p[2] : (p[0] || (mxr && p[2]));
  endfunction
  // a flush with the current flush_bits covers a guest PWC entry / a walk, for guest PWC entries
  function automatic cov_g(input [VB-1:0] v, input [AB-1:0] a);
    cov_g = flush_all || (v == flush_bits_vmid &&
                          (flush_bits_kind == 2'd1 || (flush_bits_kind == 2'd2 && a == flush_bits_asid)));
  endfunction
  // ... a host PWC / nested TLB entry or a walk, for those caches (kind 2 names only guest PWC)
  function automatic cov_h(input [VB-1:0] v);
    cov_h = flush_all || (flush_bits_kind == 2'd1 && v == flush_bits_vmid);
  endfunction

  // ------------------------------------------------------------------ ghost: requests in flight
  reg [NID-1:0]    inflight;
  reg [NID*2-1:0]  rq_cmd;
  reg [NID-1:0]    rq_user;
  reg [NID*7-1:0]  rq_flags;
  reg [NID*VB-1:0] rq_vmid;
  reg [NID*AB-1:0] rq_asid;
  reg [NID*2-1:0]  rq_mode;
  integer k;
  always @(posedge clock) begin
    if (reset) inflight <= {NID{1'b0}};
    else begin
      if (resp_fire) inflight[resp_bits_id] <= 1'b0;
      if (req_fire) begin
        inflight[req_bits_id] <= 1'b1;
        rq_cmd[req_bits_id*2 +: 2] <= req_bits_cmd;
        rq_user[req_bits_id] <= req_bits_user;
        rq_flags[req_bits_id*7 +: 7] <= req_flags;
        rq_vmid[req_bits_id*VB +: VB] <= req_bits_vmid;
        rq_asid[req_bits_id*AB +: AB] <= req_bits_asid;
        rq_mode[req_bits_id*2 +: 2] <= req_bits_mode;
      end
    end
  end
  wire [1:0] r_cmd = rq_cmd[resp_bits_id*2 +: 2];
  wire [1:0] r_mode = rq_mode[resp_bits_id*2 +: 2];
  wire [1:0] eng_mode = d_mode[d_engSlot*2 +: 2];
  wire [6:0] r_flags = rq_flags[resp_bits_id*7 +: 7];

  // ------------------------------------------------------------------ ghost: flushes
  // per slot: a flush covering the walk (for guest PWC fills: vmid+asid; host caches: vmid)
  // happened while it was in flight
  reg [W-1:0] flg, flh;
  // per cache entry: valid at a flush covering it, not refilled since (stale)
  reg [1:0] stg, sth, stt;
  // the entry a fill writes (dbg_fillWay: the entry holding its key, a free one or the victim)
  wire [1:0] f_way1 = 2'b01 << d_fillWay[0];
  wire [1:0] g_slot1 = f_way1, h_slot1 = f_way1, t_slot1 = f_way1;
  wire fill_g = d_fillValid && d_fillCache == 2'd1;
  wire fill_h = d_fillValid && d_fillCache == 2'd2;
  wire fill_t = d_fillValid && d_fillCache == 2'd3;
  // a fill by a walk in flight at a covering flush, earlier or in this cycle (P6b forbids it)
  wire [W-1:0] fcg_v, fch_v;                           // a covering flush this cycle, per slot
  wire fill_taint_g = flg[d_fillSlot] || fcg_v[d_fillSlot];
  wire fill_taint_h = flh[d_fillSlot] || fch_v[d_fillSlot];
  reg [1:0] pv_g, pv_h, pv_t;                          // valid bits last cycle
  reg [W-1:0] pbusy;                                   // busy slots last cycle
  always @(posedge clock) pbusy <= reset ? {W{1'b0}} : d_busy;
  reg       pf_g, pf_h, pf_t;                          // a fill of the cache last cycle
  reg [1:0] pw;                                        // ... and the entry it wrote (one-hot)
  genvar gi;
  generate
    for (gi = 0; gi < 2; gi = gi + 1) begin : g_ent
      wire cg = flush_fire && cov_g(d_gVmid[gi*VB +: VB], d_gAsid[gi*AB +: AB]);
      wire ch = flush_fire && cov_h(d_hVmid[gi*VB +: VB]);
      wire ct = flush_fire && cov_h(d_tVmid[gi*VB +: VB]);
      always @(posedge clock) begin
        if (reset) begin
          stg[gi] <= 1'b0; sth[gi] <= 1'b0; stt[gi] <= 1'b0;
        end else begin
          stg[gi] <= (cg && d_gValid[gi]) ? 1'b1 : (fill_g && g_slot1[gi]) ? fill_taint_g : stg[gi];
          sth[gi] <= (ch && d_hValid[gi]) ? 1'b1 : (fill_h && h_slot1[gi]) ? fill_taint_h : sth[gi];
          stt[gi] <= (ct && d_tValid[gi]) ? 1'b1 : (fill_t && t_slot1[gi]) ? fill_taint_h : stt[gi];
        end
      end
      always @* if (live) begin
        // P6a: no valid entry is stale
        `SAFE(!(stg[gi] && d_gValid[gi]));
        `SAFE(!(sth[gi] && d_hValid[gi]));
        `SAFE(!(stt[gi] && d_tValid[gi]));
        // P6d: an entry becomes valid only the cycle after a fill of its cache wrote it
        if (f_past_valid) begin
          `SAFE(!(d_gValid[gi] && !pv_g[gi]) || pf_g && pw[gi]);
          `SAFE(!(d_hValid[gi] && !pv_h[gi]) || pf_h && pw[gi]);
          `SAFE(!(d_tValid[gi] && !pv_t[gi]) || pf_t && pw[gi]);
        end
      end
    end
  endgenerate
  always @(posedge clock) begin
    pv_g <= reset ? 2'b00 : d_gValid; pv_h <= reset ? 2'b00 : d_hValid; pv_t <= reset ? 2'b00 : d_tValid;
    pf_g <= fill_g; pf_h <= fill_h; pf_t <= fill_t; pw <= f_way1;
  end

  generate
    for (gi = 0; gi < NID; gi = gi + 1) begin : g_id
      always @* if (live)
        `SAFE(inflight[gi] == ((d_busy[0] && d_id[0 +: IB] == gi) || (d_busy[1] && d_id[IB +: IB] == gi)));
    end
  endgenerate

  // ------------------------------------------------------------------ per slot
  wire [W-1:0] s_engine_state;   // slot is in a step-engine state
  generate
    for (gi = 0; gi < W; gi = gi + 1) begin : g_slot
      wire          busy  = d_busy[gi];
      wire [3:0]    st    = d_state[gi*4 +: 4];
      wire [2:0]    gl    = d_gl[gi*3 +: 3];
      wire [2:0]    hl    = d_hl[gi*3 +: 3];
      wire          fd    = d_forData[gi];
      wire          ah    = d_adHost[gi];
      wire [1:0]    mk    = d_mk[gi*2 +: 2];
      wire [IB-1:0] id    = d_id[gi*IB +: IB];
      wire [1:0]    cmd   = d_cmd[gi*2 +: 2];
      wire [3:0]    gp    = d_gperm[gi*4 +: 4];
      wire [3:0]    hp    = d_hperm[gi*4 +: 4];
      wire [2:0]    flt   = d_fault[gi*3 +: 3];
      wire [7:0]    rd    = d_reads[gi*8 +: 8];
      wire [7:0]    wr    = d_writes[gi*8 +: 8];
      wire          hst   = is_host_state(st, mk, ah);
      // function results as wires (Yosys: a function called inside a conditional always @*
      // block may leave its result undriven, which the flow turns into a free value)
      wire [7:0]    ubr   = ub_reads(st, gl, hl, fd, ah, mk);
      wire [7:0]    ubw   = ub_writes(st, gl, fd, ah, mk);
      // (a stage-2-only walk has no stage 1: its guest permission is the identity's, unchecked)
      wire          gal   = d_mode[gi*2 +: 2] == 2'd2 ||
                          g_allows(gp, cmd, d_user[gi], d_flags[gi*7 +: 7], d_mode[gi*2 +: 2] == 2'd1);
      wire          hal   = h_allows(hp, cmd, d_flags[gi*7 + 1]);
      wire          fcg   = flush_fire && cov_g(d_vmid[gi*VB +: VB], d_asid[gi*AB +: AB]);
      wire          fch   = flush_fire && cov_h(d_vmid[gi*VB +: VB]);
      assign fcg_v[gi] = busy && fcg;
      assign fch_v[gi] = busy && fch;
      assign s_engine_state[gi] = st == S_START || st == S_HSTART || st == S_HENTRY || st == S_HLDONE ||
                                  st == S_GENTRY || st == S_GLDONE;
      // guest leaf has passed its permission check (guest A/D, GuestLeafDone, data translation)
      wire g_passed = (!ah && (st == S_LOCK || st == S_RDLOCK || st == S_WRAD ||
                               (st == S_MEMWAIT && (mk == MK_LOCKED || mk == MK_WRITE)))) ||
                      st == S_GLDONE || (fd && hst);
      // the data access's host leaf has passed its check (host A/D, Dirty, HostLeafDone of data)
      wire h_passed = fd && (st == S_HLDONE || st == S_DIRTY ||
                             (ah && (st == S_LOCK || st == S_RDLOCK || st == S_WRAD ||
                                     (st == S_MEMWAIT && (mk == MK_LOCKED || mk == MK_WRITE)))));

      always @(posedge clock) begin
        if (reset || !busy) begin
          flg[gi] <= 1'b0; flh[gi] <= 1'b0;
        end else begin
          if (fcg) flg[gi] <= 1'b1;
          if (fch) flh[gi] <= 1'b1;
        end
      end

      always @* if (live) begin
        // I1
        `SAFE(st <= S_DONE);
        `SAFE(busy == (st != S_IDLE));
        if (busy) begin
          // I2: the slot's walk is its id's request
          `SAFE(inflight[id]);
          `SAFE(cmd == rq_cmd[id*2 +: 2]);
          `SAFE(d_user[gi] == rq_user[id]);
          `SAFE(d_flags[gi*7 +: 7] == rq_flags[id*7 +: 7]);
          `SAFE(d_vmid[gi*VB +: VB] == rq_vmid[id*VB +: VB]);
          `SAFE(d_asid[gi*AB +: AB] == rq_asid[id*AB +: AB]);
          `SAFE(d_mode[gi*2 +: 2] == rq_mode[id*2 +: 2]);
          // I3
          if (st != S_DONE) `SAFE(gl <= GTOP);
          if (hst && st != S_HSTART) `SAFE(hl <= HTOP);
          // P1 and I4
          `SAFE(rd <= MAXR);
          `SAFE(wr <= MAXW);
          `SAFE(rd <= ubr);
          `SAFE(wr <= ubw);
          if ((st == S_WRAD || st == S_MEMWAIT && mk == MK_WRITE) && d_dow[gi]) `SAFE(ah);   // only host A/D writes raise dirty
          if (st == S_DIRTY) `SAFE(ah);
          // I5
          if (flg[gi] || flh[gi]) `SAFE(d_noFill[gi]);
          // I6
          if (g_passed) `SAFE(gal);
          if (h_passed) `SAFE(hal);
          if (st == S_DONE && flt == 3'd0) begin
            `SAFE(gal);
            `SAFE(hal);
            `SAFE(cmd != 2'd3);
          end
          if (cmd == 2'd3) `SAFE(st == S_START || (st == S_DONE && flt == 3'd4));
          // I12 a bare-mode walk goes from Start to Done with fault 4 and no access (P10)
          if (d_mode[gi*2 +: 2] == 2'd0)
            `SAFE((st == S_START || (st == S_DONE && flt == 3'd4)) && rd == 8'd0 && wr == 8'd0);
          // I13 a single-stage walk keeps the absent stage's permission whole (it answers with the
          // other stage's): stage 1 only the host's, stage 2 only the guest's
          if (d_mode[gi*2 +: 2] == 2'd1) `SAFE(hp == 4'b1111);
          if (d_mode[gi*2 +: 2] == 2'd2) `SAFE(gp == 4'b1111);
          // (and never reaches the absent stage's states: stage 1 only no host read past HostStart,
          // whose identity leads on to the guest entry; stage 2 only no guest state, and on the
          // data access from Start's turn on)
          if (d_mode[gi*2 +: 2] == 2'd1) `SAFE(!(hst && st != S_HSTART));
          if (d_mode[gi*2 +: 2] == 2'd2) begin
            `SAFE(!(st == S_RDGUEST || st == S_GENTRY || st == S_GLDONE || (st == S_MEMWAIT && mk == MK_GUEST) ||
                    (!ah && (st == S_LOCK || st == S_RDLOCK || st == S_WRAD ||
                             (st == S_MEMWAIT && (mk == MK_LOCKED || mk == MK_WRITE))))));
            if (st != S_START && st != S_DONE) `SAFE(fd);
          end
        end
      end
    end
  endgenerate

  always @* if (live) begin
    // I2: ghost in-flight set == ids of busy slots (g_id), distinct
    `SAFE(!(d_busy[0] && d_busy[1] && d_id[0 +: IB] == d_id[IB +: IB]));

    // P2 / P3
    if (req_fire) `SAFE(!inflight[req_bits_id]);
    if (resp_valid) `SAFE(inflight[resp_bits_id]);

    // P1 on the response
    if (resp_valid) begin
      `SAFE(resp_bits_memReads <= MAXR);
      `SAFE(resp_bits_memWrites <= MAXW);
    end

    // P4
    if (resp_valid && resp_bits_fault != 3'd0) begin
      `SAFE(resp_bits_ppn == {PPNB{1'b0}});
      `SAFE(resp_bits_pageSize == 2'd0 && resp_bits_guestPageSize == 2'd0 && resp_bits_hostPageSize == 2'd0);
      `SAFE(!resp_bits_perm_r && !resp_bits_perm_w && !resp_bits_perm_x && !resp_bits_perm_u);
    end

    // P5, P5b
    if (resp_valid && resp_bits_fault == 3'd0) begin
      `SAFE(!(resp_bits_perm_r && !d_rhp_r));
      `SAFE(!(resp_bits_perm_w && !d_rhp_w));
      `SAFE(!(resp_bits_perm_x && !d_rhp_x));
      `SAFE(r_cmd != 2'd3);
      if (r_cmd == 2'd0) `SAFE(resp_bits_perm_r || r_flags[1] || r_flags[2]);
      if (r_cmd == 2'd1) `SAFE(resp_bits_perm_w);
      if (r_cmd == 2'd2) `SAFE(resp_bits_perm_x);
    end

    // P6b: no fill by a walk that was in flight at a flush covering it
    if (fill_g) `SAFE(!fill_taint_g);
    if (fill_h || fill_t) `SAFE(!fill_taint_h);
    // P6c: a hit uses a valid, non-stale entry of the walk's vmid (and asid)
    if (d_hitCache != 2'd0) `SAFE(d_hitVmid == d_vmid[d_engSlot*VB +: VB]);
    if (d_hitCache == 2'd1)
      `SAFE((d_gValid[0] && !stg[0] && d_gVmid[0 +: VB] == d_hitVmid && d_gAsid[0 +: AB] == d_asid[d_engSlot*AB +: AB]) ||
            (d_gValid[1] && !stg[1] && d_gVmid[VB +: VB] == d_hitVmid && d_gAsid[AB +: AB] == d_asid[d_engSlot*AB +: AB]));
    if (d_hitCache == 2'd2)
      `SAFE((d_hValid[0] && !sth[0] && d_hVmid[0 +: VB] == d_hitVmid) ||
            (d_hValid[1] && !sth[1] && d_hVmid[VB +: VB] == d_hitVmid));
    if (d_hitCache == 2'd3)
      `SAFE((d_tValid[0] && !stt[0] && d_tVmid[0 +: VB] == d_hitVmid) ||
            (d_tValid[1] && !stt[1] && d_tVmid[VB +: VB] == d_hitVmid));
    if (d_hitCache != 2'd0) `SAFE(s_engine_state[d_engSlot]);
    // P9 modes: a guest PWC entry answers only walks of its own kind (its stage-1-only bit is
    // the walk's: a stage-1-only entry's table is host-physical, a 2D one's guest-physical); a
    // stage-2-only walk uses no guest PWC entry, a stage-1-only walk no host cache
    if (d_hitCache == 2'd1) `SAFE(eng_mode != 2'd2 && d_hitS1 == (eng_mode == 2'd1));
    if (d_hitCache == 2'd2 || d_hitCache == 2'd3) `SAFE(eng_mode == 2'd2 || eng_mode == 2'd3);
    // P10 bare mode is bad input: fault 4 without a memory access (stage and level: tb)
    if (resp_valid && r_mode == 2'd0)
      `SAFE(resp_bits_fault == 3'd4 && resp_bits_memReads == 8'd0 && resp_bits_memWrites == 8'd0);
    // I7: the engine's registered choice: the round robin's last grant is the slot served, and a
    // lookup turn past its match (phase 1 select, 2 read, 3 turn) stays on a slot in a lookup state
    if (d_engValid) `SAFE(d_engAfter == (d_engSlot ? 2'b00 : 2'b10));
    // and the choice of the next cycle, registered a cycle ahead, is the round robin's on the
    // slots' states now
    `SAFE(d_engOk);
    // I8: the registered turn decisions are the served slot's
    `SAFE(d_decOk == 2'b11);
    // I9: the registered channel choices (response, memory port, dirty events) are consistent
    // with the slots' states: at most one slot, one that asks, and one whenever a slot asks;
    // the acceptance's registered idle bits are the slots' states
    `SAFE(d_chanOk == 4'b1111);
    // I10: the served slot's registered key is its own (the engine registers it with its choice)
    `SAFE(d_keyOk);
    // I11: a slot waiting for the lock compares its entry address with a holder's through a
    // registered compare, which is the compare of their addresses now
    `SAFE(d_lockOk);
    // I14: one copy per key in each cache (no two entries, a pending write's data counted,
    // hold one key; a landing fill finds at most one entry holding its key: the landing takes
    // that vector as its one-hot entry, with no first-set scan)
    `SAFE(d_dupOk == 3'b111);
    if (d_lookPhase != 2'd0)
      `SAFE(d_engValid && (d_state[d_engSlot*4 +: 4] == S_START || d_state[d_engSlot*4 +: 4] == S_HSTART));
    // a fill writes its entry two cycles after the owner's engine turn (AssocCache late and
    // writeLate): its owner is busy, or was in the cycle before (it answered in the landing cycle)
    if (d_fillValid) `SAFE(d_busy[d_fillSlot] || pbusy[d_fillSlot]);

    // P8: memory accesses are tagged with an id in flight; reads write nothing, an A/D write
    //     writes one byte
    if (mem_req_valid) begin
      `SAFE(inflight[mem_req_bits_id]);
      if (!mem_req_bits_write) `SAFE(mem_req_bits_wmask == 8'd0);
      if (mem_req_bits_write) `SAFE(mem_req_bits_wmask != 8'd0 && (mem_req_bits_wmask & (mem_req_bits_wmask - 8'd1)) == 8'd0);
    end

    // P7: the A/D locks, one per entry address
    `SAFE(d_lockHeld == {hl_1, hl_0});
    `SAFE(!(hl_0 && hl_1 && same_pte));
  end

  wire hl_0 = holds_lock(d_state[0 +: 4], d_mk[0 +: 2]);    // slot 0 / 1 holds the A/D lock
  wire hl_1 = holds_lock(d_state[4 +: 4], d_mk[2 +: 2]);
  wire same_pte = d_pte[0 +: P_PA_BITS] == d_pte[P_PA_BITS +: P_PA_BITS];  // both slots' entry address

  // ------------------------------------------------------------------ T: channel rule
  reg                 h_resp, h_mreq, h_dirty;     // valid and not ready last cycle
  reg [IB+3+PPNB+16-1:0] h_resp_bits;
  reg [IB+P_PA_BITS+1+64+8-1:0] h_mreq_bits;
  reg [GPNB+VB+AB+1-1:0] h_dirty_bits;
  wire [IB+3+PPNB+16-1:0] c_resp_bits = {resp_bits_id, resp_bits_fault, resp_bits_ppn, resp_bits_memReads, resp_bits_memWrites};
  wire [IB+P_PA_BITS+1+64+8-1:0] c_mreq_bits = {mem_req_bits_id, mem_req_bits_addr, mem_req_bits_write, mem_req_bits_wdata, mem_req_bits_wmask};
  wire [GPNB+VB+AB+1-1:0] c_dirty_bits = {dirty_bits_gpa, dirty_bits_vmid, dirty_bits_asid, dirty_bits_pageTable};
  always @(posedge clock) begin
    h_resp  <= live && resp_valid && !resp_ready;
    h_mreq  <= live && mem_req_valid && !mem_req_ready;
    h_dirty <= live && dirty_valid && !dirty_ready;
    h_resp_bits <= c_resp_bits; h_mreq_bits <= c_mreq_bits; h_dirty_bits <= c_dirty_bits;
  end
  always @* if (live) begin
    if (h_resp)  `SAFE(resp_valid && c_resp_bits == h_resp_bits);
    if (h_mreq)  `SAFE(mem_req_valid && c_mreq_bits == h_mreq_bits);
    if (h_dirty) `SAFE(dirty_valid && c_dirty_bits == h_dirty_bits);
  end

`ifdef LIVE
  // ================================================================== liveness (prove_live)
  localparam FAIR_K = 2;                     // memory latency bound and longest ready-low run
  // engine states: the cycle a slot another writer (acceptance, memory response, dirty channel)
  // took there is not yet a candidate of the engine's choice (docs/nested-walker.md, Step engine
  // timing), then the other slot's four-cycle lookup turn (match, select, read, turn), then its
  // own match, select and read
  localparam T_ENG  = 8;
  localparam T_ISS  = 2 * FAIR_K + 1;        // issue / Dirty / Done: the other slot's fire, then own
  // ReadLocked / WriteAd, entered by the lock's grant or a response: one cycle more, the cycle
  // the memory port's choice ahead does not see the slot yet (docs/nested-walker.md, session 34)
  localparam T_ISSL = T_ISS + 1;
  localparam T_MW   = FAIR_K;                // MemWait: the memory's answer
  // Lock: the holder's ReadLocked + MemWait + WriteAd + MemWait
  localparam T_LOCK = 2 * (T_ISSL + 1) + 2 * (T_MW + 1);
  localparam T_MAX  = T_LOCK;
  // positions (state changes since Start) along the longest path (L2): a host translation
  // HostStart .. HostLeafDone is at most 10 + 3 * HTOP changes; a guest level 4 more (ReadGuest,
  // MemWait, GuestEntry, next HostStart); the guest leaf's A/D 6 more
  localparam HT_END   = 10 + 3 * HTOP;
  localparam GL_LEN   = HT_END + 4;
  localparam STEP_MAX = 1 + GL_LEN * GTOP + HT_END + 10 + HT_END + 1;
  localparam WALK_MAX = (STEP_MAX + 1) * (T_MAX + 1);

  function automatic [7:0] ub_pos(input [3:0] s, input [2:0] gl, input [2:0] hl, input fd, input ah,
                                  input [1:0] mk);
    reg [7:0] h0, g0, hx;
    begin
      g0 = 1 + GL_LEN * (GTOP - gl);                 // HostStart of this guest level's entry
      h0 = fd ? g0 + HT_END + 10 : g0;               // HostStart of this host translation
      hx = h0 + 3 * (HTOP - hl);
      case (s)
        S_IDLE, S_START: ub_pos = 8'd0;
        S_HSTART:  ub_pos = h0;
        S_RDHOST:  ub_pos = hx + 1;
        S_HENTRY:  ub_pos = hx + 3;
        S_LOCK:    ub_pos = ah ? hx + 4 : g0 + HT_END + 4;
        S_RDLOCK:  ub_pos = ah ? hx + 5 : g0 + HT_END + 5;
        S_WRAD:    ub_pos = ah ? hx + 7 : g0 + HT_END + 7;
        S_MEMWAIT: ub_pos = mk == MK_HOST ? hx + 2 : mk == MK_GUEST ? g0 + HT_END + 2 :
                            mk == MK_LOCKED ? (ah ? hx + 6 : g0 + HT_END + 6) : (ah ? hx + 8 : g0 + HT_END + 8);
        S_DIRTY:   ub_pos = hx + 9;
        S_HLDONE:  ub_pos = hx + 10;
        S_RDGUEST: ub_pos = g0 + HT_END + 1;
        S_GENTRY:  ub_pos = g0 + HT_END + 3;
        S_GLDONE:  ub_pos = g0 + HT_END + 9;
        default:   ub_pos = STEP_MAX;
      endcase
    end
  endfunction

  // ---- fairness
  reg [3:0] w_mreq, w_resp, w_dirty;              // consecutive valid && !ready cycles
  reg [NID-1:0] outst;                             // a memory access is outstanding for the id
  reg [NID*4-1:0] age;                             // cycles since it was issued (saturating)
  always @(posedge clock) begin
    w_mreq  <= (reset || !(mem_req_valid && !mem_req_ready)) ? 4'd0 : w_mreq + 4'd1;
    w_resp  <= (reset || !(resp_valid && !resp_ready)) ? 4'd0 : w_resp + 4'd1;
    w_dirty <= (reset || !(dirty_valid && !dirty_ready)) ? 4'd0 : w_dirty + 4'd1;
  end
  generate
    for (gi = 0; gi < NID; gi = gi + 1) begin : g_mem
      always @(posedge clock) begin
        if (reset) outst[gi] <= 1'b0;
        else if (mreq_fire && mem_req_bits_id == gi) outst[gi] <= 1'b1;
        else if (mem_resp_valid && mem_resp_bits_id == gi) outst[gi] <= 1'b0;
        age[gi*4 +: 4] <= (mreq_fire && mem_req_bits_id == gi) ? 4'd0 :
                          (age[gi*4 +: 4] == 4'd15 ? 4'd15 : age[gi*4 +: 4] + 4'd1);
      end
      // the memory answers an outstanding access at the latest FAIR_K cycles after the request
      always @* if (outst[gi] && age[gi*4 +: 4] >= FAIR_K) assume (mem_resp_valid && mem_resp_bits_id == gi);
      // outstanding accesses are those of slots in MemWait (L0)
      always @* if (live)
        assert (outst[gi] == ((d_state[0 +: 4] == S_MEMWAIT && d_id[0 +: IB] == gi) ||
                              (d_state[4 +: 4] == S_MEMWAIT && d_id[IB +: IB] == gi)));
    end
  endgenerate
  always @* begin
    if (f_past_valid) assume (!reset);
    if (mem_req_valid && !mem_req_ready) assume (w_mreq < FAIR_K);
    if (resp_valid && !resp_ready) assume (w_resp < FAIR_K);
    if (dirty_valid && !dirty_ready) assume (w_dirty < FAIR_K);
  end

  // ---- per slot: cycles in the current state, state changes since Start, walk age
  reg [W*4-1:0]  pst;
  reg [W*5-1:0]  stay_q;
  reg [W*8-1:0]  steps_q;
  reg [W*12-1:0] wage_q;
  wire [W*5-1:0]  stay_v;
  wire [W*8-1:0]  steps_v;
  wire [W*12-1:0] wage_v;
  generate
    for (gi = 0; gi < W; gi = gi + 1) begin : g_live
      wire [3:0]  st      = d_state[gi*4 +: 4];
      wire [3:0]  ps      = pst[gi*4 +: 4];
      wire        changed = st != ps;
      wire        fresh   = st == S_IDLE || ps == S_IDLE;             // walk accepted this cycle (or none)
      wire [4:0]  stay    = changed ? 5'd0 : stay_q[gi*5 +: 5];        // cycles spent in st before this one
      wire [7:0]  steps   = fresh ? 8'd0 : steps_q[gi*8 +: 8] + {7'd0, changed};
      wire [11:0] wage    = fresh ? 12'd0 : wage_q[gi*12 +: 12] + 12'd1;
      assign stay_v[gi*5 +: 5] = stay;
      assign steps_v[gi*8 +: 8] = steps;
      assign wage_v[gi*12 +: 12] = wage;
      always @(posedge clock) begin
        pst[gi*4 +: 4]      <= reset ? S_IDLE : st;
        stay_q[gi*5 +: 5]   <= stay == 5'd31 ? stay : stay + 5'd1;
        steps_q[gi*8 +: 8]  <= steps;
        wage_q[gi*12 +: 12] <= wage;
      end
    end
    for (gi = 0; gi < W; gi = gi + 1) begin : g_live_chk
      localparam OJ = 1 - gi;                                          // the other slot
      wire [3:0]  st     = d_state[gi*4 +: 4];
      wire [IB-1:0] id   = d_id[gi*IB +: IB];
      wire [4:0]  stay   = stay_v[gi*5 +: 5];
      wire [7:0]  steps  = steps_v[gi*8 +: 8];
      wire [11:0] wage   = wage_v[gi*12 +: 12];
      wire [3:0]  so     = d_state[OJ*4 +: 4];
      wire [1:0]  mo     = d_mk[OJ*2 +: 2];
      wire [4:0]  so_stay = stay_v[OJ*5 +: 5];
      // cycles the other slot has held the lock, at most
      wire [5:0] hold_el = so == S_RDLOCK ? so_stay :
                           so == S_MEMWAIT && mo == MK_LOCKED ? (T_ISSL + 1) + so_stay :
                           so == S_WRAD ? (T_ISSL + 1) + (T_MW + 1) + so_stay :
                                          2 * (T_ISSL + 1) + (T_MW + 1) + so_stay;
      wire       ho  = holds_lock(so, mo);
      wire [7:0] pos = ub_pos(st, d_gl[gi*3 +: 3], d_hl[gi*3 +: 3], d_forData[gi], d_adHost[gi], d_mk[gi*2 +: 2]);
      always @* if (live && st != S_IDLE) begin
        // L0: a slot in MemWait waits exactly as long as its access's age
        if (st == S_MEMWAIT) assert (outst[id] && age[id*4 +: 4] == stay);
        // L0: waiting for the lock of its entry, which the other slot holds: at most as long as
        // it has held it (a lock of another entry does not hold it up: it is granted then)
        if (st == S_LOCK && ho && same_pte) assert (stay <= hold_el);
        // L1
        if (st == S_START || st == S_HSTART || st == S_HENTRY || st == S_HLDONE || st == S_GENTRY || st == S_GLDONE)
          assert (stay <= T_ENG);
        if (st == S_RDHOST || st == S_RDGUEST || st == S_DIRTY || st == S_DONE)
          assert (stay <= T_ISS);
        if (st == S_RDLOCK || st == S_WRAD) assert (stay <= T_ISSL);
        if (st == S_MEMWAIT) assert (stay <= T_MW);
        if (st == S_LOCK) assert (stay <= T_LOCK);
        // L2
        assert (steps <= pos);
        assert (steps <= STEP_MAX);
        // L3
        assert ({4'd0, wage} <= {8'd0, steps} * (T_MAX + 1) + stay);
        assert (wage <= WALK_MAX);
      end
    end
  endgenerate
`endif

  // ------------------------------------------------------------------ covers
`ifdef COVER
  // per id: the walk used a cache (1 guest PWC, 2 host PWC, 3 nested TLB), saw a flush
  reg [NID-1:0] c_usedG, c_usedH, c_usedT, c_flushed;
  reg c_drop_chk;                               // a bus-error response (no flush) fired last cycle
  reg [5:0] c_valid_q;
  wire [IB-1:0] eng_id = d_id[d_engSlot*IB +: IB];
  always @(posedge clock) begin
    for (k = 0; k < NID; k = k + 1) begin
      if (reset || (req_fire && req_bits_id == k)) begin
        c_usedG[k] <= 1'b0; c_usedH[k] <= 1'b0; c_usedT[k] <= 1'b0; c_flushed[k] <= 1'b0;
      end else begin
        if (d_hitCache == 2'd1 && eng_id == k) c_usedG[k] <= 1'b1;
        if (d_hitCache == 2'd2 && eng_id == k) c_usedH[k] <= 1'b1;
        if (d_hitCache == 2'd3 && eng_id == k) c_usedT[k] <= 1'b1;
        if (flush_fire && inflight[k]) c_flushed[k] <= 1'b1;
      end
    end
    c_drop_chk <= live && resp_fire && resp_bits_fault == 3'd3 && !flush_fire;
    c_valid_q  <= {d_gValid, d_hValid, d_tValid};
  end
  wire c_ok = resp_fire && resp_bits_fault == 3'd0;
  wire c_cold = !c_usedG[resp_bits_id] && !c_usedH[resp_bits_id] && !c_usedT[resp_bits_id];
  reg [31:0] c_bad_q;
  reg c_bad_ok;                                 // c_bad_q holds a post-reset value
  always @(posedge clock) begin c_bad_q <= perf_badMemResps; c_bad_ok <= live; end
  wire [3:0] st0 = d_state[0 +: 4], st1 = d_state[4 +: 4];
`ifdef LIVE
  // walker_cover_live: the fairness assumptions (and the safety assumptions) leave long walks,
  // A/D updates and two walks in flight possible, i.e. prove_live is not vacuous
  always @* if (live) begin
    cover (c_ok && g_live_chk[0].wage >= 12'd10 || c_ok && g_live_chk[1].wage >= 12'd10);  // CL1
    cover (dirty_fire);                                                                    // CL2
    cover (d_busy == 2'b11 && resp_fire);                                                  // CL3
  end
`elsif COVER_WALKS
  // walker_cover_walks: the successful walks C1-C3, the deepest covers (first reachable at
  // steps 27, 35 and 30 in walker_cover's free environment with three-cycle lookups), checked at step 45 only (sby
  // `skip`), under the cover-only assumptions CA1-CA5 below (formal/walker/README.md; only this
  // task defines COVER_WALKS: no proof and no other cover task sees them)
  always @* if (f_past_valid) begin
    assume (!reset);                                         // CA1 no reset after the first cycle
    assume (!flush_valid);                                   // CA2 no flush
    assume (resp_ready && mem_req_ready && dirty_ready);     // CA3 no back-pressure
    assume (!mem_resp_bits_error);                           // CA4 no bus error
    assume (req_bits_id[IB-1:1] == {(IB-1){1'b0}});          // CA5 request ids 0 and 1 only
    assume (req_bits_mode == 2'd3);                          // CA6 2D walks only (modes: C14)
  end
  always @* if (live) begin
    cover (c_ok && c_cold && r_mode == 2'd3);                 // C1 a cold 2D walk answered
    cover (c_ok && c_usedG[resp_bits_id] && r_mode == 2'd3);  // C2 a 2D walk with a guest PWC hit
    cover (c_ok && c_usedH[resp_bits_id] && r_mode == 2'd3);  // C3 ... host PWC hit
  end
`else
  // walker_cover: every other cover (C1-C3: walker_cover_walks above)
  always @* if (live) begin
    cover (c_ok && c_usedT[resp_bits_id]);                    // C4 a walk with a nested TLB hit
    cover (dirty_fire);                                       // C5 a dirty event
    cover (resp_fire && resp_bits_fault == 3'd1);             // C6 faults 1 .. 5
    cover (resp_fire && resp_bits_fault == 3'd2);
    cover (resp_fire && resp_bits_fault == 3'd3);
    cover (resp_fire && resp_bits_fault == 3'd4);
    cover (resp_fire && resp_bits_fault == 3'd5);
    cover (resp_fire && c_flushed[resp_bits_id]);             // C7 a walk flushed in flight answered
    cover (c_ok && c_flushed[resp_bits_id] && !c_cold);       // ... after using a cache
    cover (d_busy == 2'b11);                                  // C8 two walks in flight
    cover (c_drop_chk && (c_valid_q & ~{d_gValid, d_hValid, d_tValid}) != 6'd0);  // C9 bus error drops
    // C10 lock contention: a slot asks for the lock of the entry the other holds (both in Lock
    // in one cycle is unreachable with two slots: a free lock is granted in the cycle it is asked)
    cover ((st0 == S_LOCK && hl_1 || st1 == S_LOCK && hl_0) && same_pte);
    // C13 two D-setting walks of different entries hold their locks at once
    cover (hl_0 && hl_1 && d_needD == 2'b11 && !same_pte);
    cover (c_bad_ok && perf_badMemResps != c_bad_q);  // C11 bad-id responses dropped
    // C12 de-duplicated fill: a fill writes the valid entry holding its key while the other
    // is free (dbg_fillDup: its landing found the entry holding its key), in each cache
    cover (fill_g && d_fillDup && d_gValid[d_fillWay[0]] && d_gValid != 2'b11);
    cover (fill_h && d_fillDup && d_hValid[d_fillWay[0]] && d_hValid != 2'b11);
    cover (fill_t && d_fillDup && d_tValid[d_fillWay[0]] && d_tValid != 2'b11);
    // C14 modes: a stage-1-only and a stage-2-only walk complete; a guest PWC hit of a
    // stage-1-only walk (the 2D one's: C2, walker_cover_walks)
    cover (c_ok && r_mode == 2'd1);
    cover (c_ok && r_mode == 2'd2);
    cover (d_hitCache == 2'd1 && eng_mode == 2'd1);
    // C15 the HS-level MXR at the host check: a read answered through a host permission
    // without R (an execute-only G-stage leaf; I6's h_allows guards it)
    cover (c_ok && r_cmd == 2'd0 && !d_rhp_r);
  end
`endif
`endif
endmodule
