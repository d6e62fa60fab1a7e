// perforated_l2tlb_chk: PerforatedL2Tlb's port contract as a bindable checker (docs/checkers.md).
//
// Rules (spec perforated-l2tlb.md "Ports" and "Properties to prove", README.md "Interface
// conventions"):
//   inputs  (IN_ASSUME):  `req`, `inval` and `mem_resp` hold valid and payload while not
//                         ready; memory answers only ids it was asked
//   outputs (OUT_ASSUME): `resp` and `mem_req` hold while not ready; a response only for an id
//                         with a request outstanding, one per accepted request (counted per
//                         id: "`id` is not interpreted, two requests in flight may share one",
//                         docs/perforated-l2tlb.md); memory requests carry ids not
//                         outstanding; `invalDone` pulses only for an accepted `inval` not
//                         yet done
// Parameters: the widths of the named ports in the configuration's manifest.json.
`default_nettype none

module perforated_l2tlb_chk #(
  parameter ID_BITS    = 4,   // req_bits_id, resp_bits_id
  parameter REQ_BITS   = 1,   // every req_bits_* field but id, concatenated
  parameter RESP_BITS  = 1,   // every resp_bits_* field but id
  parameter MID_BITS   = 1,   // mem_req_bits_id, mem_resp_bits_id
  parameter ADDR_BITS  = 52,  // mem_req_bits_addr
  parameter INVAL_BITS = 1,   // every inval_bits_* field
  parameter CW         = 3,   // outstanding requests per id the checker counts
  parameter IN_ASSUME  = 1,
  parameter OUT_ASSUME = 0
) (
  input wire                  clock,
  input wire                  reset,
  input wire                  req_valid,
  input wire                  req_ready,
  input wire [ID_BITS-1:0]    req_bits_id,
  input wire [REQ_BITS-1:0]   req_payload,     // connect {req_bits_*} but id
  input wire                  resp_valid,
  input wire                  resp_ready,
  input wire [ID_BITS-1:0]    resp_bits_id,
  input wire [RESP_BITS-1:0]  resp_payload,    // connect {resp_bits_*} but id
  input wire                  mem_req_valid,
  input wire                  mem_req_ready,
  input wire [MID_BITS-1:0]   mem_req_bits_id,
  input wire [ADDR_BITS-1:0]  mem_req_bits_addr,
  input wire                  mem_req_bits_write,
  input wire [63:0]           mem_req_bits_wdata,
  input wire [7:0]            mem_req_bits_wmask,
  input wire                  mem_resp_valid,
  input wire                  mem_resp_ready,
  input wire [MID_BITS-1:0]   mem_resp_bits_id,
  input wire [63:0]           mem_resp_bits_rdata,
  input wire                  mem_resp_bits_error,
  input wire                  inval_valid,
  input wire                  inval_ready,
  input wire [INVAL_BITS-1:0] inval_payload,   // connect {inval_bits_*}
  input wire                  invalDone_valid
);
  xlat_chk_channel #(.W(ID_BITS + REQ_BITS), .ASSUME(IN_ASSUME)) c_req (
    .clock(clock), .reset(reset), .valid(req_valid), .ready(req_ready),
    .payload({req_bits_id, req_payload}));
  xlat_chk_channel #(.W(INVAL_BITS), .ASSUME(IN_ASSUME)) c_inval (
    .clock(clock), .reset(reset), .valid(inval_valid), .ready(inval_ready), .payload(inval_payload));
  xlat_chk_channel #(.W(MID_BITS + 65), .ASSUME(IN_ASSUME)) c_mem_resp (
    .clock(clock), .reset(reset), .valid(mem_resp_valid), .ready(mem_resp_ready),
    .payload({mem_resp_bits_id, mem_resp_bits_rdata, mem_resp_bits_error}));
  xlat_chk_channel #(.W(ID_BITS + RESP_BITS), .ASSUME(OUT_ASSUME)) c_resp (
    .clock(clock), .reset(reset), .valid(resp_valid), .ready(resp_ready),
    .payload({resp_bits_id, resp_payload}));
  xlat_chk_channel #(.W(MID_BITS + ADDR_BITS + 73), .ASSUME(OUT_ASSUME)) c_mem_req (
    .clock(clock), .reset(reset), .valid(mem_req_valid), .ready(mem_req_ready),
    .payload({mem_req_bits_id, mem_req_bits_addr, mem_req_bits_write, mem_req_bits_wdata,
              mem_req_bits_wmask}));

  xlat_chk_ids #(.IDW(ID_BITS), .CW(CW), .UNIQUE(0), .RSP_ASSUME(OUT_ASSUME)) i_req (
    .clock(clock), .reset(reset), .req_fire(req_valid && req_ready), .req_id(req_bits_id),
    .rsp_valid(resp_valid), .rsp_fire(resp_valid && resp_ready), .rsp_id(resp_bits_id));
  xlat_chk_ids #(.IDW(MID_BITS), .CW(1), .UNIQUE(1), .UNIQ_ASSUME(OUT_ASSUME), .RSP_ASSUME(IN_ASSUME))
    i_mem (.clock(clock), .reset(reset), .req_fire(mem_req_valid && mem_req_ready),
           .req_id(mem_req_bits_id), .rsp_valid(mem_resp_valid),
           .rsp_fire(mem_resp_valid && mem_resp_ready), .rsp_id(mem_resp_bits_id));
  xlat_chk_ids #(.IDW(0), .CW(CW), .UNIQUE(0), .RSP_ASSUME(OUT_ASSUME)) i_inval (
    .clock(clock), .reset(reset), .req_fire(inval_valid && inval_ready), .req_id(1'b0),
    .rsp_valid(invalDone_valid), .rsp_fire(invalDone_valid), .rsp_id(1'b0));
endmodule

`default_nettype wire
