// Test fixture for tb/xlat_tb (not part of the library): a 2-entry FIFO with flat Decoupled
// ports plus a Valid "echo" of every accepted input one cycle later.
module xlat_selftest_fifo (
  input  logic       clock,
  input  logic       reset,
  input  logic       in_valid,
  output logic       in_ready,
  input  logic [7:0] in_bits_data,
  input  logic [2:0] in_bits_tag,
  output logic       out_valid,
  input  logic       out_ready,
  output logic [7:0] out_bits_data,
  output logic [2:0] out_bits_tag,
  output logic       echo_valid,
  output logic [7:0] echo_bits_data
);
  logic [10:0] mem [0:1];
  logic [1:0]  count;
  logic        rd, wr;
  assign in_ready  = count != 2'd2;
  assign out_valid = count != 2'd0;
  assign {out_bits_tag, out_bits_data} = mem[rd];
  wire in_fire  = in_valid && in_ready;
  wire out_fire = out_valid && out_ready;
  always_ff @(posedge clock) begin
    if (reset) begin
      count <= 2'd0; rd <= 1'b0; wr <= 1'b0; echo_valid <= 1'b0; echo_bits_data <= 8'd0;
    end else begin
      if (in_fire) begin mem[wr] <= {in_bits_tag, in_bits_data}; wr <= ~wr; end
      if (out_fire) rd <= ~rd;
      count <= count + {1'b0, in_fire} - {1'b0, out_fire};
      echo_valid <= in_fire;
      echo_bits_data <= in_bits_data;
    end
  end
endmodule
