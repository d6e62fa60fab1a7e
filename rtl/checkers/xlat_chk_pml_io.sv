// xlat_chk_pml_io: the PmlLogger's software-facing channels, which XlatMmu carries too (its
// CSR port is PmlLogger's plus the MMU's registers; its `exit` / `guestIrq` are PmlLogger's):
// `csr_req` holds while not ready (the user's rule, IN_ASSUME); `exit` and `guestIrq` hold while
// not ready (the block's, OUT_ASSUME). The CSR response's timing is each checker's own.
// XLAT_CHK_PML_IO_PORTS is that port list (EXIT_BITS, IRQ_BITS: the including module's
// parameters), for the checkers' own port lists; ports by the blocks' names (`.*`).
`default_nettype none

`define XLAT_CHK_PML_IO_PORTS \
  input wire                 csr_req_valid, \
  input wire                 csr_req_ready, \
  input wire [15:0]          csr_req_bits_addr, \
  input wire                 csr_req_bits_write, \
  input wire [63:0]          csr_req_bits_wdata, \
  input wire                 exit_valid, \
  input wire                 exit_ready, \
  input wire [EXIT_BITS-1:0] exit_payload,      /* connect {exit_bits_*} */ \
  input wire                 guestIrq_valid, \
  input wire                 guestIrq_ready, \
  input wire [IRQ_BITS-1:0]  guestIrq_payload,  /* connect {guestIrq_bits_*} */

module xlat_chk_pml_io #(
  parameter EXIT_BITS  = 1,
  parameter IRQ_BITS   = 1,
  parameter IN_ASSUME  = 1,
  parameter OUT_ASSUME = 0
) (
  `XLAT_CHK_PML_IO_PORTS
  input wire                 clock,
  input wire                 reset
);
  xlat_chk_channel #(.W(81), .ASSUME(IN_ASSUME)) c_csr (
    .clock(clock), .reset(reset), .valid(csr_req_valid), .ready(csr_req_ready),
    .payload({csr_req_bits_addr, csr_req_bits_write, csr_req_bits_wdata}));
  xlat_chk_channel #(.W(EXIT_BITS), .ASSUME(OUT_ASSUME)) c_exit (
    .clock(clock), .reset(reset), .valid(exit_valid), .ready(exit_ready), .payload(exit_payload));
  xlat_chk_channel #(.W(IRQ_BITS), .ASSUME(OUT_ASSUME)) c_irq (
    .clock(clock), .reset(reset), .valid(guestIrq_valid), .ready(guestIrq_ready),
    .payload(guestIrq_payload));
endmodule

`default_nettype wire
