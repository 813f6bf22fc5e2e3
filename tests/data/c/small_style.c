/*
 * Hand-written for Hexscope's tests, in the form of hexagon_nn's small graph-init
 * file (graph spec §3.2): typedefs, ALIGNED, NN_PAD_ANY, designated initialisers with
 * spaces, and the 7-argument APPEND_NODE. The graph is INPUT -> Nop -> OUTPUT.
 */

#include <hexagon_nn.h>
#include <stdio.h>
#include "hexagon_nn_ops.h"
typedef int32_t qint32;
typedef int32_t int32;
typedef float float32;
typedef uint8_t quint8;
#define ALIGNED __attribute__((aligned(128)))

#define NN_PAD_ANY NN_PAD_NA

static hexagon_nn_output outputs_for_2000a[] = {
 { .rank=4,
   .max_sizes={ 1, 4, 5, 3 },
   .elementsize=4,
   .zero_offset=0,
   .stepsize=0
 }
};
static hexagon_nn_input inputs_for_2010f[] = {
 { .src_id = 0x2000a, .output_idx = 0, },
};
static hexagon_nn_output outputs_for_2010f[] = {
  { .rank=4,
    .max_sizes={ 1, 4, 5, 3 },
    .elementsize=4,
    .zero_offset=0,
    .stepsize=0
  }
};
static hexagon_nn_input inputs_for_2044d[] = {
 { .src_id = 0x2010f, .output_idx = 0, },
};

#define APPEND_CONST_NODE(ID,...) if (hexagon_nn_append_const_node(nn_id,ID,__VA_ARGS__) != 0) \
	printf("const node %x failed\n",ID); else printf("const node %x appended\n",ID)
#define APPEND_NODE(ID,...) if (hexagon_nn_append_node(nn_id,ID,__VA_ARGS__) != 0) \
	printf("node %x failed\n",ID); else printf("node %x appended\n",ID)
void init_graph(int nn_id) {
  APPEND_NODE(0x2000a,OP_INPUT,NN_PAD_ANY,NULL,0,outputs_for_2000a,1);
  APPEND_NODE(0x2010f,OP_Nop,NN_PAD_ANY,inputs_for_2010f,1,outputs_for_2010f,1);
  APPEND_NODE(0x2044d,OP_OUTPUT,NN_PAD_ANY,inputs_for_2044d,1,NULL,0);
}
