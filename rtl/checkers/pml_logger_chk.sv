// pml_logger_chk: PmlLogger's port contract as a bindable checker (docs/checkers.md).
//
// Rules (spec pml-logger.md "Ports", README.md "Interface conventions", docs/pml-logger.md):
//   inputs  (IN_ASSUME):  `dirty`, `csr_req` and `mem_resp` hold valid and payload while not
//                         ready; memory acknowledges only ids it was given
//   outputs (OUT_ASSUME): `csr_resp` one cycle after each accepted `csr_req` and never
//                         otherwise (**decided** in docs/pml-logger.md, "Pipeline timing");
//                         `mem_req`, `exit` and `guestIrq` hold while not ready; only writes
//                         are issued (spec: "only writes are issued"), with ids not outstanding
// Parameters: the widths of the named ports in the configuration's manifest.json.
`default_nettype none

module pml_logger_chk #(
  parameter DIRTY_BITS = 1,   // every dirty_bits_* field, concatenated
  parameter MID_BITS   = 4,   // mem_req_bits_id, mem_resp_bits_id
  parameter ADDR_BITS  = 52,  // mem_req_bits_addr
  parameter EXIT_BITS  = 1,   // every exit_bits_* field
  parameter IRQ_BITS   = 1,   // every guestIrq_bits_* field
  parameter IN_ASSUME  = 1,
  parameter OUT_ASSUME = 0
) (
  input wire                  clock,
  input wire                  reset,
  input wire                  dirty_valid,
  input wire                  dirty_ready,
  input wire [DIRTY_BITS-1:0] dirty_payload,   // connect {dirty_bits_*}
  input wire                  csr_req_valid,
  input wire                  csr_req_ready,
  input wire [15:0]           csr_req_bits_addr,
  input wire                  csr_req_bits_write,
  input wire [63:0]           csr_req_bits_wdata,
  input wire                  csr_resp_valid,
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
  input wire                  exit_valid,
  input wire                  exit_ready,
  input wire [EXIT_BITS-1:0]  exit_payload,    // connect {exit_bits_*}
  input wire                  guestIrq_valid,
  input wire                  guestIrq_ready,
  input wire [IRQ_BITS-1:0]   guestIrq_payload // connect {guestIrq_bits_*}
);
  xlat_chk_channel #(.W(DIRTY_BITS), .ASSUME(IN_ASSUME)) c_dirty (
    .clock(clock), .reset(reset), .valid(dirty_valid), .ready(dirty_ready), .payload(dirty_payload));
  xlat_chk_channel #(.W(81), .ASSUME(IN_ASSUME)) c_csr (
    .clock(clock), .reset(reset), .valid(csr_req_valid), .ready(csr_req_ready),
    .payload({csr_req_bits_addr, csr_req_bits_write, csr_req_bits_wdata}));
  xlat_chk_channel #(.W(MID_BITS + 65), .ASSUME(IN_ASSUME)) c_mem_resp (
    .clock(clock), .reset(reset), .valid(mem_resp_valid), .ready(mem_resp_ready),
    .payload({mem_resp_bits_id, mem_resp_bits_rdata, mem_resp_bits_error}));
  xlat_chk_channel #(.W(MID_BITS + ADDR_BITS + 73), .ASSUME(OUT_ASSUME)) c_mem_req (
    .clock(clock), .reset(reset), .valid(mem_req_valid), .ready(mem_req_ready),
    .payload({mem_req_bits_id, mem_req_bits_addr, mem_req_bits_write, mem_req_bits_wdata,
              mem_req_bits_wmask}));
  xlat_chk_channel #(.W(EXIT_BITS), .ASSUME(OUT_ASSUME)) c_exit (
    .clock(clock), .reset(reset), .valid(exit_valid), .ready(exit_ready), .payload(exit_payload));
  xlat_chk_channel #(.W(IRQ_BITS), .ASSUME(OUT_ASSUME)) c_irq (
    .clock(clock), .reset(reset), .valid(guestIrq_valid), .ready(guestIrq_ready),
    .payload(guestIrq_payload));

  xlat_chk_latency #(.LATENCY(1), .ASSUME(OUT_ASSUME)) c_csr_resp (
    .clock(clock), .reset(reset), .accept(!reset && csr_req_valid && csr_req_ready),
    .resp_valid(csr_resp_valid));
  xlat_chk_ids #(.IDW(MID_BITS), .CW(1), .UNIQUE(1), .UNIQ_ASSUME(OUT_ASSUME), .RSP_ASSUME(IN_ASSUME))
    i_mem (.clock(clock), .reset(reset), .req_fire(mem_req_valid && mem_req_ready),
           .req_id(mem_req_bits_id), .rsp_valid(mem_resp_valid),
           .rsp_fire(mem_resp_valid && mem_resp_ready), .rsp_id(mem_resp_bits_id));
  xlat_chk_rule #(.ASSUME(OUT_ASSUME)) r_writes_only (
    .clock(clock), .ok(reset || !mem_req_valid || mem_req_bits_write));
endmodule

`default_nettype wire
