"""Importing this package registers every op. Each family folder declares its ops once; the
compiled kernels they call live apart in :mod:`kernels` and declare none."""

# importing a family module registers its ops
import hexscope.engine.ops.conv.conv2d
import hexscope.engine.ops.conv.depthwise
import hexscope.engine.ops.conv.depthwise_supernode
import hexscope.engine.ops.conv.fully_connected
import hexscope.engine.ops.conv.matmul
import hexscope.engine.ops.conv.supernode
import hexscope.engine.ops.conv.supernode32
import hexscope.engine.ops.conv.supernode_d32
import hexscope.engine.ops.conv.transpose_conv
import hexscope.engine.ops.d32.arith
import hexscope.engine.ops.d32.concat
import hexscope.engine.ops.d32.convert
import hexscope.engine.ops.d32.depthspace
import hexscope.engine.ops.d32.fill_padding
import hexscope.engine.ops.d32.mirror_pad
import hexscope.engine.ops.d32.pad
import hexscope.engine.ops.d32.requantize
import hexscope.engine.ops.d32.resize_bilinear
import hexscope.engine.ops.d32.softmax
import hexscope.engine.ops.d32.split
import hexscope.engine.ops.debug.checks
import hexscope.engine.ops.debug.close_d32
import hexscope.engine.ops.debug.pprint
import hexscope.engine.ops.elementwise.activation
import hexscope.engine.ops.elementwise.arith
import hexscope.engine.ops.elementwise.delegate_only
import hexscope.engine.ops.elementwise.minmax
import hexscope.engine.ops.elementwise.mul_wide
import hexscope.engine.ops.elementwise.sub
import hexscope.engine.ops.elementwise.tanh
import hexscope.engine.ops.elementwise.unary
import hexscope.engine.ops.floating.ops
import hexscope.engine.ops.normalize.l2norm
import hexscope.engine.ops.normalize.softmax
import hexscope.engine.ops.normalize.softmax_device
import hexscope.engine.ops.plumbing.io
import hexscope.engine.ops.plumbing.state
import hexscope.engine.ops.pooling.avgpool_d32
import hexscope.engine.ops.pooling.pool
import hexscope.engine.ops.quant.quantize
import hexscope.engine.ops.quant.requant_range
import hexscope.engine.ops.quant.requantize
import hexscope.engine.ops.quant.requantize_fixed
import hexscope.engine.ops.reduce.argminmax
import hexscope.engine.ops.reduce.mean
import hexscope.engine.ops.resize.bilinear
import hexscope.engine.ops.resize.nearest
import hexscope.engine.ops.shape.concat
import hexscope.engine.ops.shape.depthspace
import hexscope.engine.ops.shape.flatten
import hexscope.engine.ops.shape.gather
import hexscope.engine.ops.shape.pack
import hexscope.engine.ops.shape.pad
import hexscope.engine.ops.shape.reshape
import hexscope.engine.ops.shape.slice
import hexscope.engine.ops.shape.space_batch  # noqa: F401
import hexscope.engine.ops.shape.strided_slice  # noqa: F401
from hexscope.engine.ops.registry import REGISTRY, Category, OpRegistry, OpSpec, Port, Repeat, op

__all__ = ["REGISTRY", "Category", "OpRegistry", "OpSpec", "Port", "Repeat", "op"]
