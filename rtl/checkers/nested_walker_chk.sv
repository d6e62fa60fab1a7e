// nested_walker_chk: NestedWalker's port contract as a bindable checker (docs/checkers.md).
//
// Rules (spec nested-walker.md "Ports", README.md "Interface conventions"):
//   inputs  (IN_ASSUME):  `req`, `flush` and `mem_resp` hold valid and payload while not
//                         ready; memory answers only ids it was asked (mem_resp.id outstanding)
//   outputs (OUT_ASSUME): `resp`, `mem_req` and `dirty` hold while not ready; a request is taken
//                         only when its id is not in flight (docs/nested-walker.md, "the id is in
//                         flight through its response's cycle", perf_idStalls); a response only
//                         for an id in flight, one per accepted request; memory requests carry
//                         ids not outstanding
// Parameters: the widths of the named ports in the configuration's manifest.json.
`default_nettype none

module nested_walker_chk #(
  parameter ID_BITS    = 4,   // req_bits_id, resp_bits_id
  parameter REQ_BITS   = 1,   // every req_bits_* field but id, concatenated
  parameter RESP_BITS  = 1,   // every resp_bits_* field but id
  parameter MID_BITS   = 4,   // mem_req_bits_id, mem_resp_bits_id
  parameter ADDR_BITS  = 52,  // mem_req_bits_addr
  parameter DIRTY_BITS = 1,   // every dirty_bits_* field
  parameter FLUSH_BITS = 1,   // every flush_bits_* field
  parameter IN_ASSUME  = 1,
  parameter OUT_ASSUME = 0
) (
  input wire                  clock,
  input wire                  reset,
  `XLAT_CHK_REQRESP_PORTS(id, ID_BITS)   // req / resp: payload = every field but id
  `XLAT_CHK_MEM_PORTS
  input wire                  dirty_valid,
  input wire                  dirty_ready,
  input wire [DIRTY_BITS-1:0] dirty_payload,   // connect {dirty_bits_*}
  input wire                  flush_valid,
  input wire                  flush_ready,
  input wire [FLUSH_BITS-1:0] flush_payload    // connect {flush_bits_*}
);
  xlat_chk_channel #(.W(FLUSH_BITS), .ASSUME(IN_ASSUME)) c_flush (
    .clock(clock), .reset(reset), .valid(flush_valid), .ready(flush_ready), .payload(flush_payload));
  `XLAT_CHK_REQRESP(i_walk, id, ID_BITS, 1, 1)
  xlat_chk_mem #(.MID_BITS(MID_BITS), .ADDR_BITS(ADDR_BITS), .IN_ASSUME(IN_ASSUME),
                 .OUT_ASSUME(OUT_ASSUME)) m_mem (.*);
  xlat_chk_channel #(.W(DIRTY_BITS), .ASSUME(OUT_ASSUME)) c_dirty (
    .clock(clock), .reset(reset), .valid(dirty_valid), .ready(dirty_ready), .payload(dirty_payload));
endmodule

`default_nettype wire
