// xlat_mmu_chk: XlatMmu's port contract as a bindable checker (docs/checkers.md).
//
// Rules (spec xlat-mmu.md "Ports", README.md "Interface conventions"):
//   inputs  (IN_ASSUME):  `req`, `fence`, `csr_req` and `mem_resp` hold valid and payload
//                         while not ready; memory answers only ids it was asked
//   outputs (OUT_ASSUME): `resp`, `mem_req`, `exit` and `guestIrq` hold while not ready; a
//                         response only for an id with a request outstanding, one per accepted
//                         request; `fenceDone` pulses only for an accepted fence not yet done
//                         ("one pulse per accepted fence"); `csr_resp` only for an accepted CSR
//                         request not yet answered; memory requests carry ids not outstanding
//                         ("ids kept apart")
// Parameters: the widths of the named ports in the configuration's manifest.json.
`default_nettype none

module xlat_mmu_chk #(
  parameter ID_BITS    = 8,   // req_bits_id, resp_bits_id
  parameter REQ_BITS   = 1,   // every req_bits_* field but id, concatenated
  parameter RESP_BITS  = 1,   // every resp_bits_* field but id
  parameter FENCE_BITS = 1,   // every fence_bits_* field
  parameter MID_BITS   = 5,   // mem_req_bits_id, mem_resp_bits_id
  parameter ADDR_BITS  = 52,  // mem_req_bits_addr
  parameter EXIT_BITS  = 1,   // every exit_bits_* field
  parameter IRQ_BITS   = 1,   // every guestIrq_bits_* field
  parameter CW         = 2,   // outstanding requests per id / fences / CSR requests counted
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
  input wire                  fence_valid,
  input wire                  fence_ready,
  input wire [FENCE_BITS-1:0] fence_payload,   // connect {fence_bits_*}
  input wire                  fenceDone,
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
  input wire                  csr_req_valid,
  input wire                  csr_req_ready,
  input wire [15:0]           csr_req_bits_addr,
  input wire                  csr_req_bits_write,
  input wire [63:0]           csr_req_bits_wdata,
  input wire                  csr_resp_valid,
  input wire                  exit_valid,
  input wire                  exit_ready,
  input wire [EXIT_BITS-1:0]  exit_payload,    // connect {exit_bits_*}
  input wire                  guestIrq_valid,
  input wire                  guestIrq_ready,
  input wire [IRQ_BITS-1:0]   guestIrq_payload // connect {guestIrq_bits_*}
);
  xlat_chk_channel #(.W(ID_BITS + REQ_BITS), .ASSUME(IN_ASSUME)) c_req (
    .clock(clock), .reset(reset), .valid(req_valid), .ready(req_ready),
    .payload({req_bits_id, req_payload}));
  xlat_chk_channel #(.W(FENCE_BITS), .ASSUME(IN_ASSUME)) c_fence (
    .clock(clock), .reset(reset), .valid(fence_valid), .ready(fence_ready), .payload(fence_payload));
  xlat_chk_channel #(.W(81), .ASSUME(IN_ASSUME)) c_csr (
    .clock(clock), .reset(reset), .valid(csr_req_valid), .ready(csr_req_ready),
    .payload({csr_req_bits_addr, csr_req_bits_write, csr_req_bits_wdata}));
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
  xlat_chk_channel #(.W(EXIT_BITS), .ASSUME(OUT_ASSUME)) c_exit (
    .clock(clock), .reset(reset), .valid(exit_valid), .ready(exit_ready), .payload(exit_payload));
  xlat_chk_channel #(.W(IRQ_BITS), .ASSUME(OUT_ASSUME)) c_irq (
    .clock(clock), .reset(reset), .valid(guestIrq_valid), .ready(guestIrq_ready),
    .payload(guestIrq_payload));

  xlat_chk_ids #(.IDW(ID_BITS), .CW(CW), .UNIQUE(0), .RSP_ASSUME(OUT_ASSUME)) i_req (
    .clock(clock), .reset(reset), .req_fire(req_valid && req_ready), .req_id(req_bits_id),
    .rsp_valid(resp_valid), .rsp_fire(resp_valid && resp_ready), .rsp_id(resp_bits_id));
  xlat_chk_ids #(.IDW(MID_BITS), .CW(1), .UNIQUE(1), .UNIQ_ASSUME(OUT_ASSUME), .RSP_ASSUME(IN_ASSUME))
    i_mem (.clock(clock), .reset(reset), .req_fire(mem_req_valid && mem_req_ready),
           .req_id(mem_req_bits_id), .rsp_valid(mem_resp_valid),
           .rsp_fire(mem_resp_valid && mem_resp_ready), .rsp_id(mem_resp_bits_id));
  xlat_chk_ids #(.IDW(0), .CW(CW), .UNIQUE(0), .RSP_ASSUME(OUT_ASSUME)) i_fence (
    .clock(clock), .reset(reset), .req_fire(fence_valid && fence_ready), .req_id(1'b0),
    .rsp_valid(fenceDone), .rsp_fire(fenceDone), .rsp_id(1'b0));
  xlat_chk_ids #(.IDW(0), .CW(CW), .UNIQUE(0), .RSP_ASSUME(OUT_ASSUME)) i_csr (
    .clock(clock), .reset(reset), .req_fire(csr_req_valid && csr_req_ready), .req_id(1'b0),
    .rsp_valid(csr_resp_valid), .rsp_fire(csr_resp_valid), .rsp_id(1'b0));
endmodule

`default_nettype wire
