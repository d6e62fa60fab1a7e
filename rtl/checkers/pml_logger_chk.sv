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
  `XLAT_CHK_MEM_PORTS
  `XLAT_CHK_PML_IO_PORTS   // csr_req, exit, guestIrq
  input wire                  csr_resp_valid
);
  xlat_chk_channel #(.W(DIRTY_BITS), .ASSUME(IN_ASSUME)) c_dirty (
    .clock(clock), .reset(reset), .valid(dirty_valid), .ready(dirty_ready), .payload(dirty_payload));
  xlat_chk_mem #(.MID_BITS(MID_BITS), .ADDR_BITS(ADDR_BITS), .IN_ASSUME(IN_ASSUME),
                 .OUT_ASSUME(OUT_ASSUME)) m_mem (.*);
  xlat_chk_pml_io #(.EXIT_BITS(EXIT_BITS), .IRQ_BITS(IRQ_BITS), .IN_ASSUME(IN_ASSUME),
                    .OUT_ASSUME(OUT_ASSUME)) p_io (.*);

  xlat_chk_latency #(.LATENCY(1), .ASSUME(OUT_ASSUME)) c_csr_resp (
    .clock(clock), .reset(reset), .accept(!reset && csr_req_valid && csr_req_ready),
    .resp_valid(csr_resp_valid));
  xlat_chk_rule #(.ASSUME(OUT_ASSUME)) r_writes_only (
    .clock(clock), .ok(reset || !mem_req_valid || mem_req_bits_write));
endmodule

`default_nettype wire
