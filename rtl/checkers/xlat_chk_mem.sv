// xlat_chk_mem: the rules of the common memory port (spec README.md "Interface conventions":
// `mem_req` {id, addr, write, wdata, wmask} out, `mem_resp` {id, rdata, error} in, responses out
// of order by id), for every checker of a block with one. The block is the requester:
//   outputs (OUT_ASSUME): `mem_req` holds while not ready; ids distinct while outstanding
//   inputs  (IN_ASSUME):  `mem_resp` holds while not ready; only ids that were asked
// Ports by the blocks' names, so a block checker connects it with `.*`; XLAT_CHK_MEM_PORTS is
// that port list (MID_BITS, ADDR_BITS: the including module's parameters), for the checkers'
// own port lists (compile this file before them, as xlat_checkers.core lists it).
`default_nettype none

`define XLAT_CHK_MEM_PORTS \
  input wire                 mem_req_valid, \
  input wire                 mem_req_ready, \
  input wire [MID_BITS-1:0]  mem_req_bits_id, \
  input wire [ADDR_BITS-1:0] mem_req_bits_addr, \
  input wire                 mem_req_bits_write, \
  input wire [63:0]          mem_req_bits_wdata, \
  input wire [7:0]           mem_req_bits_wmask, \
  input wire                 mem_resp_valid, \
  input wire                 mem_resp_ready, \
  input wire [MID_BITS-1:0]  mem_resp_bits_id, \
  input wire [63:0]          mem_resp_bits_rdata, \
  input wire                 mem_resp_bits_error,

module xlat_chk_mem #(
  parameter MID_BITS   = 4,
  parameter ADDR_BITS  = 52,
  parameter IN_ASSUME  = 1,
  parameter OUT_ASSUME = 0
) (
  `XLAT_CHK_MEM_PORTS
  input wire                 clock,
  input wire                 reset
);
  xlat_chk_channel #(.W(MID_BITS + ADDR_BITS + 73), .ASSUME(OUT_ASSUME)) c_mem_req (
    .clock(clock), .reset(reset), .valid(mem_req_valid), .ready(mem_req_ready),
    .payload({mem_req_bits_id, mem_req_bits_addr, mem_req_bits_write, mem_req_bits_wdata,
              mem_req_bits_wmask}));
  xlat_chk_channel #(.W(MID_BITS + 65), .ASSUME(IN_ASSUME)) c_mem_resp (
    .clock(clock), .reset(reset), .valid(mem_resp_valid), .ready(mem_resp_ready),
    .payload({mem_resp_bits_id, mem_resp_bits_rdata, mem_resp_bits_error}));
  xlat_chk_ids #(.IDW(MID_BITS), .CW(1), .UNIQUE(1), .UNIQ_ASSUME(OUT_ASSUME), .RSP_ASSUME(IN_ASSUME))
    i_mem (.clock(clock), .reset(reset), .req_fire(mem_req_valid && mem_req_ready),
           .req_id(mem_req_bits_id), .rsp_valid(mem_resp_valid),
           .rsp_fire(mem_resp_valid && mem_resp_ready), .rsp_id(mem_resp_bits_id));
endmodule

`default_nettype wire
