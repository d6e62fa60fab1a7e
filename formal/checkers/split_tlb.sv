// split_tlb: a small user design, as an integrator would write it, for formal/checkers: an
// instruction TLB and a data TLB, two BabelFishTlb instances of one configuration made with
// `xlat.Generate --prefix itlb` / `--prefix dtlb` (module names itlb_BabelFishTlb,
// dtlb_BabelFishTlb). A lookup and a fill go to the TLB their `side` names (0 instruction,
// 1 data); an invalidation goes to both (a fork: each TLB takes it once, the sender's ready
// when both have); each TLB's response leaves on its own port (`i_resp_*`, `d_resp_*`).
//
// The integrator checks the TLBs' port contracts with babelfish_tlb_chk (rtl/checkers/), one
// per instance, instantiated beside it (Yosys reads no `bind`; docs/checkers.md) on the
// signals this design drives into the TLB and the signals it presents as the TLB's response.
// CHK_IN_ASSUME / CHK_OUT_ASSUME choose the sides (formal/checkers/README.md).
//
// Mutations (formal/checkers/README.md), selected by defines:
//   XLAT_MUT_CROSS  the two responses cross-wired (i_resp from the data TLB, d_resp from the
//                   instruction TLB)
//   XLAT_MUT_FORK   the invalidation fork offers each TLB the request only while the other is
//                   ready (its valid may drop before it was taken)
`default_nettype none

module split_tlb #(
  // the TLBs' configuration (its manifest.json / params.svh)
  parameter P_VPN_BITS     = 20,
  parameter P_PPN_BITS     = 27,
  parameter P_PCID_BITS    = 2,
  parameter P_CCID_BITS    = 2,
  parameter P_PC_BITS      = 3,
  parameter P_PC_IDX_BITS  = 2,
  parameter P_VMID_BITS    = 0,
  parameter P_SHARING      = 1,
  parameter P_LATENCY      = 4,
  parameter CHK_IN_ASSUME  = 0,
  parameter CHK_OUT_ASSUME = 1
) (
  input  wire                     clock,
  input  wire                     reset,
  // lookups
  input  wire                     lookup_valid,
  output wire                     lookup_ready,
  input  wire                     lookup_side,
  input  wire [P_VPN_BITS-1:0]    lookup_vpn,
  input  wire [P_PCID_BITS-1:0]   lookup_pcid,
  input  wire [P_CCID_BITS-1:0]   lookup_ccid,
  input  wire [P_PC_IDX_BITS-1:0] lookup_pcIdx,
  input  wire                     lookup_pcIdxValid,
  input  wire [1:0]               lookup_cmd,
  input  wire                     lookup_user,
  // fills
  input  wire                     fill_valid,
  output wire                     fill_ready,
  input  wire                     fill_side,
  input  wire [P_VPN_BITS-1:0]    fill_vpn,
  input  wire [P_PPN_BITS-1:0]    fill_ppn,
  input  wire [1:0]               fill_pageSize,
  input  wire [3:0]               fill_perm,      // {r, w, x, u}
  input  wire                     fill_dirty,
  input  wire                     fill_global,
  input  wire [P_PCID_BITS-1:0]   fill_pcid,
  input  wire [P_CCID_BITS-1:0]   fill_ccid,
  input  wire                     fill_own,
  input  wire [P_PC_BITS-1:0]     fill_pc,
  // invalidations (both TLBs)
  input  wire                     inval_valid,
  output wire                     inval_ready,
  input  wire [2:0]               inval_kind,
  input  wire [P_VPN_BITS-1:0]    inval_vpn,
  input  wire [P_PCID_BITS-1:0]   inval_pcid,
  input  wire [P_CCID_BITS-1:0]   inval_ccid,
  // responses
  output wire                     i_resp_valid,
  output wire                     i_resp_hit,
  output wire [P_PPN_BITS-1:0]    i_resp_ppn,
  output wire                     d_resp_valid,
  output wire                     d_resp_hit,
  output wire [P_PPN_BITS-1:0]    d_resp_ppn
);
  // ------------------------------------------------------------------ the two TLBs
  // every port of each instance as a wire named <tlb>_<port>
`define SPLIT_TLB_WIRES(t) \
  wire t``_lookup_req_valid, t``_lookup_req_ready, t``_fill_valid, t``_fill_ready; \
  wire t``_inval_valid, t``_inval_ready; \
  wire t``_lookup_resp_valid, t``_lookup_resp_bits_hit; \
  wire [P_PPN_BITS-1:0] t``_lookup_resp_bits_ppn; \
  wire [1:0] t``_lookup_resp_bits_pageSize; \
  wire t``_lookup_resp_bits_perm_r, t``_lookup_resp_bits_perm_w, t``_lookup_resp_bits_perm_x; \
  wire t``_lookup_resp_bits_perm_u, t``_lookup_resp_bits_dirty, t``_lookup_resp_bits_shared; \
  wire t``_lookup_resp_bits_crossHit, t``_lookup_resp_bits_permFault;
  `SPLIT_TLB_WIRES(i)
  `SPLIT_TLB_WIRES(d)

  assign i_lookup_req_valid = lookup_valid && !lookup_side;
  assign d_lookup_req_valid = lookup_valid && lookup_side;
  assign lookup_ready = lookup_side ? d_lookup_req_ready : i_lookup_req_ready;
  assign i_fill_valid = fill_valid && !fill_side;
  assign d_fill_valid = fill_valid && fill_side;
  assign fill_ready = fill_side ? d_fill_ready : i_fill_ready;

  // invalidation fork: sent_x = TLB x took the current request already
  reg sent_i, sent_d;
  wire fire_i = i_inval_valid && i_inval_ready;
  wire fire_d = d_inval_valid && d_inval_ready;
  assign inval_ready = (sent_i || i_inval_ready) && (sent_d || d_inval_ready);
`ifdef XLAT_MUT_FORK
  assign i_inval_valid = inval_valid && d_inval_ready && !sent_i;
`else
  assign i_inval_valid = inval_valid && !sent_i;
`endif
  assign d_inval_valid = inval_valid && !sent_d;
  always @(posedge clock) begin
    if (reset || (inval_valid && inval_ready)) begin
      sent_i <= 1'b0;
      sent_d <= 1'b0;
    end else begin
      if (fire_i) sent_i <= 1'b1;
      if (fire_d) sent_d <= 1'b1;
    end
  end

// the request side of TLB t (what this design drives into it): the lookup, fill and
// invalidation channels, shared by the TLB's instance and its checker
`define SPLIT_TLB_REQ(t) \
    .lookup_req_valid(t``_lookup_req_valid), .lookup_req_ready(t``_lookup_req_ready), \
    .lookup_req_bits_vpn(lookup_vpn), .lookup_req_bits_pcid(lookup_pcid), \
    .lookup_req_bits_ccid(lookup_ccid), .lookup_req_bits_pcIdx(lookup_pcIdx), \
    .lookup_req_bits_pcIdxValid(lookup_pcIdxValid), .lookup_req_bits_cmd(lookup_cmd), \
    .lookup_req_bits_user(lookup_user)
`define SPLIT_TLB_OPS(t) \
    .fill_valid(t``_fill_valid), .fill_ready(t``_fill_ready), \
    .fill_bits_vpn(fill_vpn), .fill_bits_ppn(fill_ppn), .fill_bits_pageSize(fill_pageSize), \
    .fill_bits_perm_r(fill_perm[3]), .fill_bits_perm_w(fill_perm[2]), \
    .fill_bits_perm_x(fill_perm[1]), .fill_bits_perm_u(fill_perm[0]), \
    .fill_bits_dirty(fill_dirty), .fill_bits_global(fill_global), .fill_bits_pcid(fill_pcid), \
    .fill_bits_ccid(fill_ccid), .fill_bits_own(fill_own), .fill_bits_pc(fill_pc), \
    .inval_valid(t``_inval_valid), .inval_ready(t``_inval_ready), .inval_bits_kind(inval_kind), \
    .inval_bits_vpn(inval_vpn), .inval_bits_pcid(inval_pcid), .inval_bits_ccid(inval_ccid)

`define SPLIT_TLB_PORTS(t) \
    .clock(clock), .reset(reset), \
    `SPLIT_TLB_REQ(t), \
    .lookup_resp_valid(t``_lookup_resp_valid), .lookup_resp_bits_hit(t``_lookup_resp_bits_hit), \
    .lookup_resp_bits_ppn(t``_lookup_resp_bits_ppn), \
    .lookup_resp_bits_pageSize(t``_lookup_resp_bits_pageSize), \
    .lookup_resp_bits_perm_r(t``_lookup_resp_bits_perm_r), \
    .lookup_resp_bits_perm_w(t``_lookup_resp_bits_perm_w), \
    .lookup_resp_bits_perm_x(t``_lookup_resp_bits_perm_x), \
    .lookup_resp_bits_perm_u(t``_lookup_resp_bits_perm_u), \
    .lookup_resp_bits_dirty(t``_lookup_resp_bits_dirty), \
    .lookup_resp_bits_shared(t``_lookup_resp_bits_shared), \
    .lookup_resp_bits_crossHit(t``_lookup_resp_bits_crossHit), \
    .lookup_resp_bits_permFault(t``_lookup_resp_bits_permFault), \
    `SPLIT_TLB_OPS(t)

  itlb_BabelFishTlb itlb (`SPLIT_TLB_PORTS(i));
  dtlb_BabelFishTlb dtlb (`SPLIT_TLB_PORTS(d));

  // ------------------------------------------------------------------ responses out
`ifdef XLAT_MUT_CROSS
  `define SPLIT_TLB_I d
  `define SPLIT_TLB_D i
`else
  `define SPLIT_TLB_I i
  `define SPLIT_TLB_D d
`endif
  // what this design presents as each TLB's response (all fields, for the checkers)
`define SPLIT_TLB_RESP(o, t) \
  wire o``_valid_w = t``_lookup_resp_valid, o``_hit_w = t``_lookup_resp_bits_hit; \
  wire [P_PPN_BITS-1:0] o``_ppn_w = t``_lookup_resp_bits_ppn; \
  wire [1:0] o``_size_w = t``_lookup_resp_bits_pageSize; \
  wire [4:0] o``_perm_w = {t``_lookup_resp_bits_perm_r, t``_lookup_resp_bits_perm_w, \
    t``_lookup_resp_bits_perm_x, t``_lookup_resp_bits_perm_u, t``_lookup_resp_bits_dirty}; \
  wire o``_shared_w = t``_lookup_resp_bits_shared, o``_cross_w = t``_lookup_resp_bits_crossHit;
  `SPLIT_TLB_RESP(ir, `SPLIT_TLB_I)
  `SPLIT_TLB_RESP(dr, `SPLIT_TLB_D)
  assign i_resp_valid = ir_valid_w;
  assign i_resp_hit   = ir_hit_w;
  assign i_resp_ppn   = ir_ppn_w;
  assign d_resp_valid = dr_valid_w;
  assign d_resp_hit   = dr_hit_w;
  assign d_resp_ppn   = dr_ppn_w;

`ifdef FORMAL
  // ------------------------------------------------------------------ the integrator's checkers
  // one tracked context and page per TLB, any values
  (* anyconst *) reg [P_VPN_BITS-1:0]  sym_i_vpn, sym_d_vpn;
  (* anyconst *) reg [P_PCID_BITS-1:0] sym_i_pcid, sym_d_pcid;
  (* anyconst *) reg [P_CCID_BITS-1:0] sym_i_ccid, sym_d_ccid;
`define SPLIT_TLB_CHK(t, o) \
  babelfish_tlb_chk #( \
    .VPN_BITS(P_VPN_BITS), .PPN_BITS(P_PPN_BITS), .PCID_BITS(P_PCID_BITS), \
    .CCID_BITS(P_CCID_BITS), .PC_BITS(P_PC_BITS), .PC_IDX_BITS(P_PC_IDX_BITS), \
    .VMID_BITS(P_VMID_BITS), .SHARING(P_SHARING), .LATENCY(P_LATENCY), \
    .IN_ASSUME(CHK_IN_ASSUME), .OUT_ASSUME(CHK_OUT_ASSUME) \
  ) t``_chk ( \
    .clock(clock), .reset(reset), \
    `SPLIT_TLB_REQ(t), \
    .lookup_resp_valid(o``_valid_w), .lookup_resp_bits_hit(o``_hit_w), \
    .lookup_resp_bits_ppn(o``_ppn_w), .lookup_resp_bits_pageSize(o``_size_w), \
    .lookup_resp_bits_perm_r(o``_perm_w[4]), .lookup_resp_bits_perm_w(o``_perm_w[3]), \
    .lookup_resp_bits_perm_x(o``_perm_w[2]), .lookup_resp_bits_perm_u(o``_perm_w[1]), \
    .lookup_resp_bits_dirty(o``_perm_w[0]), .lookup_resp_bits_shared(o``_shared_w), \
    .lookup_resp_bits_crossHit(o``_cross_w), \
    `SPLIT_TLB_OPS(t), \
    .sym_sel_vpn(sym_``t``_vpn), .sym_sel_pcid(sym_``t``_pcid), .sym_sel_ccid(sym_``t``_ccid))
  `SPLIT_TLB_CHK(i, ir);
  `SPLIT_TLB_CHK(d, dr);
`endif
endmodule

`default_nettype wire
