"""The convolution family: QuantizedConv2d, the Supernodes, QuantizedMatMul."""
