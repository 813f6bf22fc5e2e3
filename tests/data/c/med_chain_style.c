/*
 * Hand-written for Hexscope's tests, in the form of hexagon_nn's medium graph-init
 * file (graph spec §3.2, §3.3): const data arrays with ALIGNED, OUTPUT_4D, the 8-argument
 * APPEND_NODE with node names, a shape-only const (NULL, 0), commented-out old-style
 * initialisers, and the Flatten/Min_f/Max_f -> Quantize pattern that only works once
 * prepare fuses it into AutoQuantize. The conv and bias-add outputs are declared with
 * element size 1, as generated files do: too small for their int32 results, they run on the
 * device only because prepare fuses conv -> requantize -> bias add -> requantize -> relu into
 * one Supernode_8x8p8to8 whose output (the relu's) is declared right. (med_style.c is the
 * same graph without the bias add, which prepare does not fuse.)
 */

#include <hexagon_nn.h>
#include <stdio.h>
#include "hexagon_nn_ops.h"
typedef int32_t qint32;
typedef int32_t int32;
typedef float float32;
typedef uint8_t quint8;
#define ALIGNED __attribute__((aligned(128)))
void info_for_debug(unsigned int id, const char *name, const char *opname);

#define NN_PAD_ANY NN_PAD_NA

#define OUTPUT_4D(B,H,W,D,ES) \
	{ .rank = 4, .max_sizes = {B,H,W,D}, .elementsize = ES, \
	.zero_offset = 0, .stepsize = 0.0f, }

/* 2x2 filter, 3 input channels, 16 output channels */
static quint8 data_for_op_3000b[] ALIGNED = {
  80,117,154,94,131,168,108,145,85,122,159,99,136,173,113,150,
  90,127,164,104,141,81,118,155,95,132,169,109,146,86,123,160,
  100,137,174,114,151,91,128,165,105,142,82,119,156,96,133,170,
  110,147,87,124,161,101,138,175,115,152,92,129,166,106,143,83,
  120,157,97,134,171,111,148,88,125,162,102,139,176,116,153,93,
  130,167,107,144,84,121,158,98,135,172,112,149,89,126,163,103,
  140,80,117,154,94,131,168,108,145,85,122,159,99,136,173,113,
  150,90,127,164,104,141,81,118,155,95,132,169,109,146,86,123,
  160,100,137,174,114,151,91,128,165,105,142,82,119,156,96,133,
  170,110,147,87,124,161,101,138,175,115,152,92,129,166,106,143,
  83,120,157,97,134,171,111,148,88,125,162,102,139,176,116,153,
  93,130,167,107,144,84,121,158,98,135,172,112,149,89,126,163,
};

static float32 data_for_op_3000c[] ALIGNED = {
  -4.0,
};
static float32 data_for_op_3000d[] ALIGNED = {
  4.0,
};
static int32 data_for_op_3000e[] ALIGNED = {
  -1,
};
static int32 data_for_op_3000f[] ALIGNED = {
  0,
};

/* the bias: 16 codes in [-2, 2] */
static quint8 data_for_op_30010[] ALIGNED = {
  128,140,116,150,106,160,96,170,86,180,76,190,66,200,56,210,
};
static float32 data_for_op_30011[] ALIGNED = {
  -2.0,
};
static float32 data_for_op_30012[] ALIGNED = {
  2.0,
};

static hexagon_nn_output outputs_for_3024a[] = {
 OUTPUT_4D(1,9,9,3,4),
};

static hexagon_nn_input inputs_for_3024b[] = {
 { .src_id = 0x3024a, .output_idx = 0, },
 { .src_id = 0x3000e, .output_idx = 0, },
};
static hexagon_nn_output outputs_for_3024b[] = {
 OUTPUT_4D(1,1,1,243,4), 
};

static hexagon_nn_input inputs_for_3024c[] = {
 { .src_id = 0x3024b, .output_idx = 0, },
 { .src_id = 0x3000f, .output_idx = 0, },
};
static hexagon_nn_output outputs_for_3024c[] = {
 OUTPUT_4D(1,1,1,1,4), 
};
static hexagon_nn_input inputs_for_3024d[] = {
 { .src_id = 0x3024b, .output_idx = 0, },
 { .src_id = 0x3000f, .output_idx = 0, },
};
static hexagon_nn_output outputs_for_3024d[] = {
 OUTPUT_4D(1,1,1,1,4), 
};

static hexagon_nn_input inputs_for_3024e[] = {
 { .src_id = 0x3024a, .output_idx = 0, },
 { .src_id = 0x3024c, .output_idx = 0, },
 { .src_id = 0x3024d, .output_idx = 0, },
};
static hexagon_nn_output outputs_for_3024e[] = {
 OUTPUT_4D(1,9,9,3,1), //{ .max_size = 243, }, // 1x9x9x3 x1
 OUTPUT_4D(1,1,1,1,4),
 OUTPUT_4D(1,1,1,1,4),
};

static hexagon_nn_input inputs_for_3024f[] = {
 { .src_id = 0x3024e, .output_idx = 0, },
 { .src_id = 0x3000b, .output_idx = 0, },
 { .src_id = 0x3024e, .output_idx = 1, },
 { .src_id = 0x3024e, .output_idx = 2, },
 { .src_id = 0x3000c, .output_idx = 0, },
 { .src_id = 0x3000d, .output_idx = 0, },
 { .src_id = 0x30250, .output_idx = 0, },
};
static hexagon_nn_output outputs_for_3024f[] = {
 OUTPUT_4D(1,4,4,16,1), //{ .max_size = 1024, }, // 1x4x4x16 x4
 OUTPUT_4D(1,1,1,1,4),
 OUTPUT_4D(1,1,1,1,4),
};

static hexagon_nn_input inputs_for_30251[] = {
 { .src_id = 0x3024f, .output_idx = 0, },
 { .src_id = 0x3024f, .output_idx = 1, },
 { .src_id = 0x3024f, .output_idx = 2, },
};
static hexagon_nn_output outputs_for_30251[] = {
 OUTPUT_4D(1,4,4,16,1), // { .max_size = 256, }, // 1x4x4x16 x1
 OUTPUT_4D(1,1,1,1,4),
 OUTPUT_4D(1,1,1,1,4),
};

static hexagon_nn_input inputs_for_30252[] = {
 { .src_id = 0x30251, .output_idx = 0, },
 { .src_id = 0x30010, .output_idx = 0, },
 { .src_id = 0x30251, .output_idx = 1, },
 { .src_id = 0x30251, .output_idx = 2, },
 { .src_id = 0x30011, .output_idx = 0, },
 { .src_id = 0x30012, .output_idx = 0, },
};
static hexagon_nn_output outputs_for_30252[] = {
 OUTPUT_4D(1,4,4,16,1), //{ .max_size = 1024, }, // 1x4x4x16 x4
 OUTPUT_4D(1,1,1,1,4),
 OUTPUT_4D(1,1,1,1,4),
};

static hexagon_nn_input inputs_for_30253[] = {
 { .src_id = 0x30252, .output_idx = 0, },
 { .src_id = 0x30252, .output_idx = 1, },
 { .src_id = 0x30252, .output_idx = 2, },
};
static hexagon_nn_output outputs_for_30253[] = {
 OUTPUT_4D(1,4,4,16,1),
 OUTPUT_4D(1,1,1,1,4),
 OUTPUT_4D(1,1,1,1,4),
};

static hexagon_nn_input inputs_for_30254[] = {
 { .src_id = 0x30253, .output_idx = 0, },
 { .src_id = 0x30253, .output_idx = 1, },
 { .src_id = 0x30253, .output_idx = 2, },
};
static hexagon_nn_output outputs_for_30254[] = {
 OUTPUT_4D(1,4,4,16,1),
 OUTPUT_4D(1,1,1,1,4),
 OUTPUT_4D(1,1,1,1,4),
};

static hexagon_nn_input inputs_for_30442[] = {
 { .src_id = 0x30254, .output_idx = 0, },
 { .src_id = 0x30254, .output_idx = 1, },
 { .src_id = 0x30254, .output_idx = 2, },
};
static hexagon_nn_output outputs_for_30442[] = {
 OUTPUT_4D(1,4,4,16,4), // { .max_size = (256*4), }, // 1x4x4x16x4
};

static hexagon_nn_input inputs_for_3044d[] = {
 { .src_id = 0x30442, .output_idx = 0, },
};

#define APPEND_CONST_NODE(ID,...) if (hexagon_nn_append_const_node(nn_id,ID,__VA_ARGS__) != 0) \
	printf("const node %x failed\n",ID); else printf("const node %x appended\n",ID)
#define APPEND_NODE(NAME,ID,OP,...) info_for_debug(ID,NAME,#OP); \
	if (hexagon_nn_append_node(nn_id,ID,OP,__VA_ARGS__) != 0) \
	printf("node %x <%s/%s> failed\n",ID,NAME,#OP)
void init_graph(int nn_id) {
  APPEND_CONST_NODE(0x3000b,2,2,3,16,(const uint8_t *)data_for_op_3000b,192);
  APPEND_CONST_NODE(0x3000c,1,1,1,1,(const uint8_t *)data_for_op_3000c,4);
  APPEND_CONST_NODE(0x3000d,1,1,1,1,(const uint8_t *)data_for_op_3000d,4);
  APPEND_CONST_NODE(0x3000e,1,1,1,1,(const uint8_t *)data_for_op_3000e,4);
  APPEND_CONST_NODE(0x3000f,1,1,1,1,(const uint8_t *)data_for_op_3000f,4);
  APPEND_CONST_NODE(0x30250,1,2,2,1,(const uint8_t *)NULL,0);
  APPEND_CONST_NODE(0x30010,1,1,1,16,(const uint8_t *)data_for_op_30010,16);
  APPEND_CONST_NODE(0x30011,1,1,1,1,(const uint8_t *)data_for_op_30011,4);
  APPEND_CONST_NODE(0x30012,1,1,1,1,(const uint8_t *)data_for_op_30012,4);

  APPEND_NODE("INPUT",0x3024a,OP_INPUT,NN_PAD_ANY,NULL,0,outputs_for_3024a,1);
  APPEND_NODE("Flatten_for_minmax",0x3024b,OP_Flatten,NN_PAD_ANY,inputs_for_3024b,2,outputs_for_3024b,1);
  APPEND_NODE("min_for_Quantize",0x3024c,OP_Min_f,NN_PAD_ANY,inputs_for_3024c,2,outputs_for_3024c,1);
  APPEND_NODE("max_for_Quantize",0x3024d,OP_Max_f,NN_PAD_ANY,inputs_for_3024d,2,outputs_for_3024d,1);
  APPEND_NODE("Quantize",0x3024e,OP_Quantize,NN_PAD_ANY,inputs_for_3024e,3,outputs_for_3024e,3);
  APPEND_NODE("conv",0x3024f,OP_QuantizedConv2d_8x8to32,NN_PAD_VALID,inputs_for_3024f,7,outputs_for_3024f,3);
  APPEND_NODE("requant",0x30251,OP_QuantizeDownAndShrinkRange_32to8,NN_PAD_ANY,inputs_for_30251,3,outputs_for_30251,3);
  APPEND_NODE("biasadd",0x30252,OP_QuantizedBiasAdd_8p8to32,NN_PAD_ANY,inputs_for_30252,6,outputs_for_30252,3);
  APPEND_NODE("requant1",0x30253,OP_QuantizeDownAndShrinkRange_32to8,NN_PAD_ANY,inputs_for_30253,3,outputs_for_30253,3);
  APPEND_NODE("relu",0x30254,OP_QuantizedRelu_8,NN_PAD_ANY,inputs_for_30254,3,outputs_for_30254,3);
  APPEND_NODE("Dequantize",0x30442,OP_Dequantize,NN_PAD_ANY,inputs_for_30442,3,outputs_for_30442,1);
  APPEND_NODE("OUTPUT",0x3044d,OP_OUTPUT,NN_PAD_ANY,inputs_for_3044d,1,NULL,0);

}
