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
  `XLAT_CHK_REQRESP_PORTS(id, ID_BITS)   // req / resp: payload = every field but id
  input wire                  fence_valid,
  input wire                  fence_ready,
  input wire [FENCE_BITS-1:0] fence_payload,   // connect {fence_bits_*}
  input wire                  fenceDone,
  `XLAT_CHK_MEM_PORTS
  `XLAT_CHK_PML_IO_PORTS   // csr_req, exit, guestIrq
  input wire                  csr_resp_valid
);
  xlat_chk_channel #(.W(FENCE_BITS), .ASSUME(IN_ASSUME)) c_fence (
    .clock(clock), .reset(reset), .valid(fence_valid), .ready(fence_ready), .payload(fence_payload));
  `XLAT_CHK_REQRESP(i_req, id, ID_BITS, CW, 0)
  xlat_chk_mem #(.MID_BITS(MID_BITS), .ADDR_BITS(ADDR_BITS), .IN_ASSUME(IN_ASSUME),
                 .OUT_ASSUME(OUT_ASSUME)) m_mem (.*);
  xlat_chk_pml_io #(.EXIT_BITS(EXIT_BITS), .IRQ_BITS(IRQ_BITS), .IN_ASSUME(IN_ASSUME),
                    .OUT_ASSUME(OUT_ASSUME)) p_io (.*);

  xlat_chk_ids #(.IDW(0), .CW(CW), .UNIQUE(0), .RSP_ASSUME(OUT_ASSUME)) i_fence (
    .clock(clock), .reset(reset), .req_fire(fence_valid && fence_ready), .req_id(1'b0),
    .rsp_valid(fenceDone), .rsp_fire(fenceDone), .rsp_id(1'b0));
  xlat_chk_ids #(.IDW(0), .CW(CW), .UNIQUE(0), .RSP_ASSUME(OUT_ASSUME)) i_csr (
    .clock(clock), .reset(reset), .req_fire(csr_req_valid && csr_req_ready), .req_id(1'b0),
    .rsp_valid(csr_resp_valid), .rsp_fire(csr_resp_valid), .rsp_id(1'b0));
endmodule

`default_nettype wire
