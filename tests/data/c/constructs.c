/* Hand-written for Hexscope's tests: every construct variant of graph spec §3.3 that the
   importer must read, in one file that still compiles (gcc -fsyntax-only).
   Expected graph (see tests/engine/test_c_import.py):
     consts 0x1000f (int32 {-1, 16, 8, 0x7fffffff} shape 1x1x2x2),
            0x10010 (float {1.5, -0.25, 3e2, 0, 0, 0} 1x1x1x6, explicit size with zero fill),
            0x10011 (uint8 {0x10, 255, 0} 1x1x1x3), 0x10012 (int16 {-2, 7}),
            0x10013 (int8 {-128, 127}), 0x10014 shape-only 1x3x3x1
     0x20001 INPUT, 0x20002 Nop (label "a \"quoted\" name"), 0x20003 Nop (SAME),
     0x20004 OUTPUT reading 0x20003:0 and 0x20002:1 */
#include <hexagon_nn.h>
#include "hexagon_nn_ops.h"
#include <stdio.h>

typedef uint8_t quint8;
typedef int32_t qint32;
typedef qint32 my_int;              /* a typedef of a typedef */
typedef float float32;
typedef int16_t short_t;

#define ALIGNED __attribute__((aligned(128)))
#define NN_PAD_ANY NN_PAD_NA
#define DEPTH 2 /* an object-like macro used as a value */
#define TWICE_DEPTH (DEPTH * 2)
#define LONG_MACRO_IS_SKIPPED(a, b) \
	do { (void)(a); \
	     (void)(b); } while (0)

static const my_int data_for_op_1000f[4] ALIGNED = { -1, 0x10, 010 /* octal 8 */,
	0x7fffffffL };
static float32 data_for_op_10010[6] __attribute__((aligned(128))) = {
	1.5f, -.25F, 3e2, // a line comment inside an array
};
static const unsigned char data_for_op_10011[] = { 0x10, 255u, 0, };
static short_t data_for_op_10012[] = { -2, +7 };
static int8_t data_for_op_10013[] = { -128, 127 };

static hexagon_nn_output outputs_for_20001[] = {
	{.elementsize=4,.max_sizes={1,4,4,DEPTH},.rank=4,},        /* any field order */
};
static hexagon_nn_input inputs_for_20002[] = { { 0x20001, 0 } };  /* positional */
static hexagon_nn_output outputs_for_20002[] = {
	{ .rank = 4, .max_sizes = { 1, 4, 4, DEPTH }, .elementsize = 4 }, // missing fields are 0
	{ 4, { 1, 1, 1, TWICE_DEPTH }, 4, -3, 0.5f },  /* positional, with zero_offset/stepsize */
};
static hexagon_nn_input inputs_for_20003[] = {
	{ .output_idx = 0, .src_id = 0x20002 },
	{ .src_id = 0x1000f, .output_idx = 0 },   /* beyond the count: not used */
};
static hexagon_nn_output outputs_for_20003[] = {
	{ .rank = 2, .max_sizes = { 16, DEPTH, 9, 9 }, .elementsize = 4 },  /* rank 2: 9s ignored */
};
static hexagon_nn_input inputs_for_20004[] = {
	{ .src_id=0x20003,.output_idx=0 },{ .src_id=0x20002,.output_idx=1 },
};

#define APPEND_CONST_NODE(ID,...) \
	if (hexagon_nn_append_const_node(nn_id,ID,__VA_ARGS__) != 0) printf("fail %x\n", ID)
#define APPEND_NODE(NAME,ID,OP,...) \
	if (hexagon_nn_append_node(nn_id,ID,OP,__VA_ARGS__) != 0) printf("fail %s\n", NAME)

void init_graph(int nn_id)
{
	APPEND_CONST_NODE(0x1000f, 1, 1, 2, 2, (const uint8_t *)data_for_op_1000f, 16);
	APPEND_CONST_NODE(0x10010, 1, 1, 1, 6, (const uint8_t *) &data_for_op_10010[0], 24);
	APPEND_CONST_NODE(0x10011, 1, 1, 1, 3, data_for_op_10011, 3);
	APPEND_CONST_NODE(0x10012, 1, 1, 1, 2, (const uint8_t *)data_for_op_10012, 2 * 2);
	APPEND_CONST_NODE(0x10013, 1, 1, 1, 2, (const uint8_t *)data_for_op_10013, 2);
	APPEND_CONST_NODE(0x10014, 1, 3, 3, 1, (const uint8_t *)NULL, 0);

	APPEND_NODE("INPUT", 0x20001, OP_INPUT, NN_PAD_ANY, NULL, 0, outputs_for_20001, 1);
	APPEND_NODE("a \"quoted\" name", 0x20002, OP_Nop, NN_PAD_NA,
		    inputs_for_20002, 1, outputs_for_20002, 2);   /* a call over two lines */
	hexagon_nn_append_node(nn_id, 0x20003, 2 /* OP_Nop by number */, 1 /* SAME */,
		    inputs_for_20003, 1, outputs_for_20003, 1);
	APPEND_NODE("", 0x20004, OP_OUTPUT, NN_PAD_ANY, inputs_for_20004, 2, NULL, 0);
}
