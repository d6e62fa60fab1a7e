// babelfish_tlb_chk: BabelFishTlb's port contract as a bindable checker (docs/checkers.md).
//
// Rules (spec babelfish-tlb.md "Ports", README.md "Interface conventions"):
//   inputs  (IN_ASSUME):  `lookup_req`, `fill`, `inval` hold valid and payload while not ready
//   outputs (OUT_ASSUME): `lookup_resp` is valid exactly LATENCY cycles after each accepted
//                         lookup (one response per request, none without one); and the
//                         isolation rule below
// Isolation, tracked for one symbolic context and page S = {sym_sel_vpn, sym_sel_pcid,
// sym_sel_ccid} (a proof ties these inputs to $anyconst, so the rule holds for every S; a
// simulation to a constant, or with SYM_FROM_FILL = 1 takes the first fill's): a hit answering a lookup of S (same vpn, pcid and ccid) returns what a fill gave
// S's context for a page covering S.vpn, and still in the TLB as far as the ports tell. Per
// class and size (private, shared, global x 4 KiB, 2 MiB, 1 GiB; the spec's fill keys) the
// checker keeps the last such fill ("slot"): its 4 KiB frame of S.vpn, pageSize, permissions,
// dirty, and for the invalidation kinds its filler's pcid, ccid and PC mask. A fill of the same
// class, size and identity replaces the slot (a fill whose key equals an entry's overwrites
// it); an invalidation whose kind removes the slot's entry (docs/babelfish-tlb.md,
// "Invalidation") kills it; a fill of another identity never does (an eviction may remove an
// entry without the checker knowing: a slot is what may answer, not what must). So the rule
// catches a hit across PCIDs / CCIDs (P1, P3, P5), a shared hit for a process whose PC bit is
// set (P2), a hit after an invalidation removed the entry (P4), and a wrong frame or
// permission. `shared` must name the class that answered, `crossHit` a shared entry another
// PCID filled. Visibility: an operation accepted in cycle t is seen by every lookup accepted
// after t (spec), so a lookup is checked against the slots of its acceptance cycle.
//
// Scope: configurations without a VMID tag (VMID_BITS = 0); a VMID configuration stops the
// elaboration (docs/checkers.md, "Not covered"). Parameters: the manifest's params / derived
// values of the same names (params.svh P_*).
`default_nettype none

module babelfish_tlb_chk #(
  parameter VPN_BITS    = 36,
  parameter PPN_BITS    = 40,
  parameter PCID_BITS   = 12,
  parameter CCID_BITS   = 12,
  parameter PC_BITS     = 32,
  parameter PC_IDX_BITS = 5,
  parameter VMID_BITS   = 0,
  parameter SHARING     = 1,
  parameter LATENCY     = 4,
  parameter SYM_FROM_FILL = 0,   // 1: S is the first fill's {vpn, pcid, ccid} after reset or
                                 // an invalidation of everything
  parameter IN_ASSUME   = 1,
  parameter OUT_ASSUME  = 0
) (
  input wire                   clock,
  input wire                   reset,
  // lookup
  input wire                   lookup_req_valid,
  input wire                   lookup_req_ready,
  input wire [VPN_BITS-1:0]    lookup_req_bits_vpn,
  input wire [PCID_BITS-1:0]   lookup_req_bits_pcid,
  input wire [CCID_BITS-1:0]   lookup_req_bits_ccid,
  input wire [PC_IDX_BITS-1:0] lookup_req_bits_pcIdx,
  input wire                   lookup_req_bits_pcIdxValid,
  input wire [1:0]             lookup_req_bits_cmd,
  input wire                   lookup_req_bits_user,
  input wire                   lookup_resp_valid,
  input wire                   lookup_resp_bits_hit,
  input wire [PPN_BITS-1:0]    lookup_resp_bits_ppn,
  input wire [1:0]             lookup_resp_bits_pageSize,
  input wire                   lookup_resp_bits_perm_r,
  input wire                   lookup_resp_bits_perm_w,
  input wire                   lookup_resp_bits_perm_x,
  input wire                   lookup_resp_bits_perm_u,
  input wire                   lookup_resp_bits_dirty,
  input wire                   lookup_resp_bits_shared,
  input wire                   lookup_resp_bits_crossHit,
  // fill
  input wire                   fill_valid,
  input wire                   fill_ready,
  input wire [VPN_BITS-1:0]    fill_bits_vpn,
  input wire [PPN_BITS-1:0]    fill_bits_ppn,
  input wire [1:0]             fill_bits_pageSize,
  input wire                   fill_bits_perm_r,
  input wire                   fill_bits_perm_w,
  input wire                   fill_bits_perm_x,
  input wire                   fill_bits_perm_u,
  input wire                   fill_bits_dirty,
  input wire                   fill_bits_global,
  input wire [PCID_BITS-1:0]   fill_bits_pcid,
  input wire [CCID_BITS-1:0]   fill_bits_ccid,
  input wire                   fill_bits_own,
  input wire [PC_BITS-1:0]     fill_bits_pc,
  // invalidation
  input wire                   inval_valid,
  input wire                   inval_ready,
  input wire [2:0]             inval_bits_kind,
  input wire [VPN_BITS-1:0]    inval_bits_vpn,
  input wire [PCID_BITS-1:0]   inval_bits_pcid,
  input wire [CCID_BITS-1:0]   inval_bits_ccid,
  // the tracked context and page (free constants: $anyconst in a proof)
  input wire [VPN_BITS-1:0]    sym_sel_vpn,
  input wire [PCID_BITS-1:0]   sym_sel_pcid,
  input wire [CCID_BITS-1:0]   sym_sel_ccid
);
  generate
    if (VMID_BITS != 0) begin : g_err_vmid
      $error("babelfish_tlb_chk: configurations with a VMID tag are not covered (docs/checkers.md)");
    end
  endgenerate

  wire lookup_fire = !reset && lookup_req_valid && lookup_req_ready;
  wire fill_fire   = !reset && fill_valid && fill_ready;
  wire inval_fire  = !reset && inval_valid && inval_ready;
  // kinds that remove every entry (0; 6 and 7 are treated as 0 without a VMID tag)
  wire inval_all   = inval_bits_kind == 3'd0 || inval_bits_kind[2:1] == 2'b11;

  // ------------------------------------------------------------------ the tracked S
  // SYM_FROM_FILL = 1 (a simulation that wants S looked up often): S is latched from the first
  // fill accepted after reset or after an invalidation that removes every entry (kind 0; 6 and
  // 7 without a VMID tag), and that fill already counts for S. Sound as the constant form: the
  // TLB and the slots are empty then, and no fill came between that point and the one that
  // chose S. A lookup in flight keeps the S of its acceptance (q_spcid below).
  wire [VPN_BITS-1:0]  sym_vpn;
  wire [PCID_BITS-1:0] sym_pcid;
  wire [CCID_BITS-1:0] sym_ccid;
  generate
    if (SYM_FROM_FILL != 0) begin : g_sym_fill
      reg                 chosen;
      reg [VPN_BITS-1:0]  q_vpn;
      reg [PCID_BITS-1:0] q_pcid;
      reg [CCID_BITS-1:0] q_ccid;
      always @(posedge clock) begin
        if (reset || (inval_fire && inval_all && !fill_fire)) chosen <= 1'b0;
        else if (fill_fire) chosen <= 1'b1;
        if (!chosen) {q_vpn, q_pcid, q_ccid} <= {fill_bits_vpn, fill_bits_pcid, fill_bits_ccid};
      end
      assign {sym_vpn, sym_pcid, sym_ccid} = chosen ? {q_vpn, q_pcid, q_ccid}
                                           : {fill_bits_vpn, fill_bits_pcid, fill_bits_ccid};
      wire unused_sel = ^{sym_sel_vpn, sym_sel_pcid, sym_sel_ccid};
    end else begin : g_sym_in
      assign {sym_vpn, sym_pcid, sym_ccid} = {sym_sel_vpn, sym_sel_pcid, sym_sel_ccid};
    end
  endgenerate

  // ------------------------------------------------------------------ channel rules (inputs)
  xlat_chk_channel #(.W(VPN_BITS + PCID_BITS + CCID_BITS + PC_IDX_BITS + 4), .ASSUME(IN_ASSUME))
    c_lookup (.clock(clock), .reset(reset), .valid(lookup_req_valid), .ready(lookup_req_ready),
              .payload({lookup_req_bits_vpn, lookup_req_bits_pcid, lookup_req_bits_ccid,
                        lookup_req_bits_pcIdx, lookup_req_bits_pcIdxValid, lookup_req_bits_cmd,
                        lookup_req_bits_user}));
  xlat_chk_channel #(.W(VPN_BITS + PPN_BITS + PCID_BITS + CCID_BITS + PC_BITS + 9),
                     .ASSUME(IN_ASSUME))
    c_fill (.clock(clock), .reset(reset), .valid(fill_valid), .ready(fill_ready),
            .payload({fill_bits_vpn, fill_bits_ppn, fill_bits_pageSize, fill_bits_perm_r,
                      fill_bits_perm_w, fill_bits_perm_x, fill_bits_perm_u, fill_bits_dirty,
                      fill_bits_global, fill_bits_pcid, fill_bits_ccid, fill_bits_own,
                      fill_bits_pc}));
  xlat_chk_channel #(.W(3 + VPN_BITS + PCID_BITS + CCID_BITS), .ASSUME(IN_ASSUME))
    c_inval (.clock(clock), .reset(reset), .valid(inval_valid), .ready(inval_ready),
             .payload({inval_bits_kind, inval_bits_vpn, inval_bits_pcid, inval_bits_ccid}));

  // ------------------------------------------------------------------ one response per lookup
  xlat_chk_latency #(.LATENCY(LATENCY), .ASSUME(OUT_ASSUME)) c_resp (
    .clock(clock), .reset(reset), .accept(lookup_fire), .resp_valid(lookup_resp_valid));

  // ------------------------------------------------------------------ slots of S
  // slot k = 3 * class + size; class 0 private, 1 shared, 2 global
  localparam NSLOT = 9;
  localparam PP = PPN_BITS;

  // S.vpn and another page in the same page of size sz (the VPN bits above 9 * sz agree)
  function automatic covers(input [VPN_BITS-1:0] a, input [VPN_BITS-1:0] b, input [1:0] sz);
    covers = sz == 2'd0 ? a == b
           : sz == 2'd1 ? (a >> 9) == (b >> 9)
           :              (a >> 18) == (b >> 18);
  endfunction

  // the 4 KiB frame of S.vpn in a page of size sz at ppn (a superpage's low bits ignored)
  function automatic [PP-1:0] frame_of(input [PP-1:0] ppn, input [1:0] sz);
    reg [PP-1:0] lo;
    begin
      lo = {{(PP > VPN_BITS ? PP - VPN_BITS : 0){1'b0}}, sym_vpn[VPN_BITS-1:0]};
      frame_of = sz == 2'd0 ? ppn
               : sz == 2'd1 ? ((ppn >> 9) << 9) | (lo & {{(PP - 9){1'b0}}, 9'h1FF})
               :              ((ppn >> 18) << 18) | (lo & {{(PP - 18){1'b0}}, 18'h3FFFF});
    end
  endfunction

  // the fill's class (with sharing off every non-global fill is private) and whether it
  // writes the slot of S of its class and size (same identity as S, page covering S.vpn)
  wire [1:0] f_class = fill_bits_global ? 2'd2 : (fill_bits_own || SHARING == 0) ? 2'd0 : 2'd1;
  wire       f_ok_size = fill_bits_pageSize != 2'd3;               // pageSize 3: not installed
  wire       f_covers  = covers(fill_bits_vpn, sym_vpn, fill_bits_pageSize);
  wire       f_ident   = f_class == 2'd2 ? 1'b1
                       : f_class == 2'd1 ? fill_bits_ccid == sym_ccid
                       : SHARING != 0   ? fill_bits_pcid == sym_pcid && fill_bits_ccid == sym_ccid
                       :                  fill_bits_pcid == sym_pcid;
  wire       f_write   = fill_fire && f_ok_size && f_covers && f_ident;

  // per slot: its state, whether the accepted invalidation removes its entry, and whether it
  // explains the response to a lookup of S (from the copy taken at the lookup's acceptance)
  localparam SW = 1 + PP + 5 + PCID_BITS + PC_BITS;   // live, frame, perm, pcid, pc
  wire [NSLOT*SW-1:0] now_slots;
  wire [NSLOT-1:0]    explains;
`ifdef FORMAL
  wire [NSLOT-1:0]    live_v, kill_v;   // for the covers
`endif

  // lookups of S in flight: a lookup of S, its PC index, and every slot as at acceptance
  reg [LATENCY-1:0]   q_isS;
  reg [PC_IDX_BITS:0] q_idx  [0:LATENCY-1];   // {pcIdxValid, pcIdx}
  reg [PCID_BITS-1:0] q_spcid [0:LATENCY-1];  // S's pcid at acceptance (SYM_FROM_FILL may change S)
  reg [NSLOT*SW-1:0]  q_slot [0:LATENCY-1];
  wire [PC_IDX_BITS:0] r_idx  = q_idx[LATENCY-1];
  wire [PCID_BITS-1:0] r_spcid = q_spcid[LATENCY-1];
  wire [NSLOT*SW-1:0]  r_slot = q_slot[LATENCY-1];
  wire [4:0] r_perm = {lookup_resp_bits_perm_r, lookup_resp_bits_perm_w, lookup_resp_bits_perm_x,
                       lookup_resp_bits_perm_u, lookup_resp_bits_dirty};
  // a PC index outside pcBits counts as "bit set" (spec "Bad input")
  wire r_idx_out = {{(32 - PC_IDX_BITS){1'b0}}, r_idx[PC_IDX_BITS-1:0]} >= PC_BITS;

  genvar g;
  generate
    for (g = 0; g < NSLOT; g = g + 1) begin : g_slot
      localparam integer CLS_I = g / 3;
      localparam integer SZ_I  = g % 3;
      localparam [1:0]   CLS   = CLS_I[1:0];   // 0 private, 1 shared, 2 global
      localparam [1:0]   SZ    = SZ_I[1:0];
      reg                 live;
      reg [PP-1:0]        frame;
      reg [4:0]           perm;   // {r, w, x, u, dirty}
      reg [PCID_BITS-1:0] pcid;
      reg [CCID_BITS-1:0] ccid;
      reg [PC_BITS-1:0]   pc;
      // docs/babelfish-tlb.md "Invalidation", for an entry of this class and size covering S.vpn
      reg kill;
      always @(*) begin
        case (inval_bits_kind)
          3'd1: kill = CLS != 2'd2;
          3'd2: kill = CLS == 2'd0 && pcid == inval_bits_pcid;
          3'd3: kill = CLS != 2'd2 && ccid == inval_bits_ccid;
          3'd4: kill = CLS == 2'd0 && pcid == inval_bits_pcid && covers(inval_bits_vpn, sym_vpn, SZ);
          3'd5: kill = CLS != 2'd2 && ccid == inval_bits_ccid && covers(inval_bits_vpn, sym_vpn, SZ);
          default: kill = inval_all;   // 0 all; 6, 7 reserved without a VMID tag: as 0
        endcase
      end
      always @(posedge clock) begin
        if (reset) begin
          live <= 1'b0;
        end else if (f_write && f_class == CLS && fill_bits_pageSize == SZ) begin
          live  <= 1'b1;
          frame <= frame_of(fill_bits_ppn, fill_bits_pageSize);
          perm  <= {fill_bits_perm_r, fill_bits_perm_w, fill_bits_perm_x, fill_bits_perm_u,
                    fill_bits_dirty};
          pcid  <= fill_bits_pcid;
          ccid  <= fill_bits_ccid;
          pc    <= fill_bits_pc;
        end else if (inval_fire && kill) begin
          live <= 1'b0;
        end
      end
`ifdef FORMAL
      assign live_v[g] = live;
      assign kill_v[g] = kill;
`endif
      assign now_slots[g*SW +: SW] = {live, frame, perm, pcid, pc};

      wire                 a_live = r_slot[g*SW + SW - 1];
      wire [PP-1:0]        a_frame;
      wire [4:0]           a_perm;
      wire [PCID_BITS-1:0] a_pcid;
      wire [PC_BITS-1:0]   a_pc;
      assign {a_frame, a_perm, a_pcid, a_pc} = r_slot[g*SW +: SW-1];
      wire a_pc_bit = r_idx[PC_IDX_BITS] && (r_idx_out || a_pc[r_idx[PC_IDX_BITS-1:0]]);
      assign explains[g] = a_live && a_frame == lookup_resp_bits_ppn
                           && lookup_resp_bits_pageSize == SZ && a_perm == r_perm
                           && lookup_resp_bits_shared == (CLS == 2'd1)
                           && (CLS != 2'd1
                               || (!a_pc_bit && lookup_resp_bits_crossHit == (a_pcid != r_spcid)));
    end
  endgenerate

  wire isS = lookup_fire && lookup_req_bits_vpn == sym_vpn && lookup_req_bits_pcid == sym_pcid
             && lookup_req_bits_ccid == sym_ccid;
  integer st;
  always @(posedge clock) begin
    q_isS[0]  <= !reset && isS;
    q_idx[0]  <= {lookup_req_bits_pcIdxValid, lookup_req_bits_pcIdx};
    q_spcid[0] <= sym_pcid;
    q_slot[0] <= now_slots;
    for (st = 1; st < LATENCY; st = st + 1) begin
      q_isS[st]  <= !reset && q_isS[st-1];
      q_idx[st]  <= q_idx[st-1];
      q_spcid[st] <= q_spcid[st-1];
      q_slot[st] <= q_slot[st-1];
    end
  end

  xlat_chk_rule #(.ASSUME(OUT_ASSUME)) r_isolation (
    .clock(clock),
    .ok(reset || !(lookup_resp_valid && lookup_resp_bits_hit && q_isS[LATENCY-1]) || |explains));

`ifdef XLAT_CHK_STATS
  // simulation statistic (not reset): responses to S the isolation rule checked, hits among them
  reg [31:0] stat_sym_resps = 32'd0, stat_sym_hits = 32'd0;
  always @(posedge clock) if (!reset && lookup_resp_valid && q_isS[LATENCY-1]) begin
    stat_sym_resps <= stat_sym_resps + 32'd1;
    if (lookup_resp_bits_hit) stat_sym_hits <= stat_sym_hits + 32'd1;
  end
`endif

`ifdef FORMAL
  // the guarded cases of the rules happen (a proof's cover task; docs/checkers.md)
  reg [2:0] cv_stalled;   // {lookup, fill, inval} offered and not taken in the last cycle
  always @(posedge clock)
    cv_stalled <= reset ? 3'b0 : {lookup_req_valid && !lookup_req_ready, fill_valid && !fill_ready,
                                  inval_valid && !inval_ready};
  wire r_S = lookup_resp_valid && q_isS[LATENCY-1];
  always @(posedge clock) if (!reset) begin
    cover (cv_stalled[2] && lookup_fire);                           // a held lookup taken
    cover (cv_stalled[1] && fill_fire);
    cover (cv_stalled[0] && inval_fire);
    cover (r_S && lookup_resp_bits_hit);                            // S answered by a hit
    cover (r_S && lookup_resp_bits_hit && lookup_resp_bits_shared);
    cover (r_S && lookup_resp_bits_hit && lookup_resp_bits_crossHit);
    cover (r_S && lookup_resp_bits_hit && |explains[8:6]);          // ... by a global entry
    cover (f_write && |live_v);                                     // a fill of S beside a slot
    cover (inval_fire && |(live_v & kill_v));                       // a slot of S removed
    cover (inval_fire && inval_bits_kind == 3'd5 && |(live_v[5:3] & kill_v[5:3]));  // kind 5, shared
  end
`endif
endmodule

`default_nettype wire
