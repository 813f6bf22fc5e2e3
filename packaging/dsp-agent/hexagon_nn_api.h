/*
 * hexagon_nn's host (CPU-side) API: the subset the device agent calls.
 *
 * Written for Hexscope from /work/shared/spec/hexagon_nn-graph-and-format.md (section 2) and
 * from the public interface description of nnlib (interface/hexagon_nn.idl and .api): the
 * names, argument order and the way the IDL compiler maps its types to C (an IDL
 * "unsigned long" is a 32-bit unsigned int, "long" a 32-bit int, a sequence<T> a pointer
 * followed by an int length). The declarations are our own; on Android they must match the
 * ABI of the generated stub (libhexagon_nn_stub / hexagon_nn_stub.c) that the agent links,
 * so every struct here has the 32-bit fields, in the order, that the IDL gives.
 *
 * Return values: 0 on success, non-zero on failure (spec §2), unless noted.
 */
#ifndef HEXSCOPE_HEXAGON_NN_API_H
#define HEXSCOPE_HEXAGON_NN_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A graph id: positive, never 0 (spec §2.2). */
typedef int32_t hexagon_nn_nn_id;

/* NN_PAD_* (spec §2.3). */
typedef int32_t hexagon_nn_padding_type;
enum {
    HEXSCOPE_NN_PAD_NA = 0,
    HEXSCOPE_NN_PAD_SAME = 1,
    HEXSCOPE_NN_PAD_VALID = 2,
    HEXSCOPE_NN_PAD_MIRROR_REFLECT = 3,
    HEXSCOPE_NN_PAD_MIRROR_SYMMETRIC = 4,
    HEXSCOPE_NN_PAD_SAME_CAFFE = 5
};

/* Input i of a node: output `output_idx` of node `src_id` (spec §2.3). */
typedef struct hexagon_nn_input {
    uint32_t src_id;
    uint32_t output_idx;
} hexagon_nn_input;

/* An output definition (spec §2.3, §1.4); 48 bytes, the same layout as the wire's OutputDesc. */
typedef struct hexagon_nn_output {
    uint32_t rank;
    uint32_t max_sizes[8];
    uint32_t elementsize;
    int32_t zero_offset;
    float stepsize;
} hexagon_nn_output;

/* One record of get_perfinfo (spec §2.9). */
typedef struct hexagon_nn_perfinfo {
    uint32_t node_id;
    uint32_t executions;
    uint32_t counter_lo;
    uint32_t counter_hi;
} hexagon_nn_perfinfo;

/* A graph input or output for execute_new (spec §2.6): the shape, the caller's buffer and
 * its size (dataLen), and the valid byte count (in for inputs, out for outputs). */
typedef struct hexagon_nn_tensordef {
    uint32_t batches;
    uint32_t height;
    uint32_t width;
    uint32_t depth;
    unsigned char *data;
    int32_t dataLen;
    uint32_t data_valid_len;
    uint32_t unused;
} hexagon_nn_tensordef;

/* The IDL's records are all 32-bit fields: their sizes do not depend on the ABI. */
_Static_assert(sizeof(hexagon_nn_input) == 8, "hexagon_nn_input is 2 x 32 bits");
_Static_assert(sizeof(hexagon_nn_output) == 48, "hexagon_nn_output is 12 x 32 bits");
_Static_assert(sizeof(hexagon_nn_perfinfo) == 16, "hexagon_nn_perfinfo is 4 x 32 bits");

/* Library set-up; the stub needs it once per process before any graph call. */
int hexagon_nn_config(void);

/* Graph lifecycle (spec §2.1, §2.2, §2.10). */
int hexagon_nn_init(hexagon_nn_nn_id *g);
int hexagon_nn_teardown(hexagon_nn_nn_id id);
int hexagon_nn_set_debug_level(hexagon_nn_nn_id id, int level);

/* Building (spec §2.3, §2.4). */
int hexagon_nn_append_node(hexagon_nn_nn_id id, uint32_t node_id, uint32_t operation,
                           hexagon_nn_padding_type padding,
                           const hexagon_nn_input *inputs, int inputsLen,
                           const hexagon_nn_output *outputs, int outputsLen);
int hexagon_nn_append_const_node(hexagon_nn_nn_id id, uint32_t node_id, uint32_t batches,
                                 uint32_t height, uint32_t width, uint32_t depth,
                                 const unsigned char *data, int dataLen);

/* Prepare and run (spec §2.5, §2.6). */
int hexagon_nn_prepare(hexagon_nn_nn_id id);
int hexagon_nn_execute_new(hexagon_nn_nn_id id,
                           const hexagon_nn_tensordef *inputs, int inputsLen,
                           hexagon_nn_tensordef *outputs, int outputsLen);

/* Introspection (spec §2.8, §2.9, §2.11). getlog writes at most bufLen-1 bytes, NUL-terminated,
 * and clears the log. get_perfinfo fails when info_outLen is below the node count. */
int hexagon_nn_getlog(hexagon_nn_nn_id id, unsigned char *buf, int bufLen);
int hexagon_nn_get_perfinfo(hexagon_nn_nn_id id, hexagon_nn_perfinfo *info_out, int info_outLen,
                            uint32_t *n_items);
int hexagon_nn_reset_perfinfo(hexagon_nn_nn_id id, uint32_t event);
int hexagon_nn_last_execution_cycles(hexagon_nn_nn_id id, uint32_t *cycles_lo,
                                     uint32_t *cycles_hi);
int hexagon_nn_get_num_nodes_in_graph(hexagon_nn_nn_id id, uint32_t *num_nodes);
int hexagon_nn_version(int *ver);
int hexagon_nn_op_name_to_id(const char *name, uint32_t *node_id);

#ifdef __cplusplus
}
#endif

#endif
