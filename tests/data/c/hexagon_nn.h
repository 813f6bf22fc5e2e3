/*
 * hexagon_nn.h for Hexscope's tests, written from the graph spec (§2.3, §2.4, §3.2):
 * just enough of hexagon_nn's public header for graph-init files to compile with
 * `gcc -fsyntax-only`. Field order and types follow the spec's struct descriptions.
 */
#ifndef HEXSCOPE_TEST_HEXAGON_NN_H
#define HEXSCOPE_TEST_HEXAGON_NN_H

#include <stdint.h>

typedef int hexagon_nn_nn_id;

typedef struct hexagon_nn_input {
	uint32_t src_id;
	uint32_t output_idx;
} hexagon_nn_input;

typedef struct hexagon_nn_output {
	uint32_t rank;
	uint32_t max_sizes[8];
	uint32_t elementsize;
	int32_t zero_offset;
	float stepsize;
} hexagon_nn_output;

typedef enum padding_type_enum {
	NN_PAD_NA = 0,
	NN_PAD_SAME = 1,
	NN_PAD_VALID = 2,
	NN_PAD_MIRROR_REFLECT = 3,
	NN_PAD_MIRROR_SYMMETRIC = 4,
	NN_PAD_SAME_CAFFE = 5,
} hexagon_nn_padding_type;

int hexagon_nn_append_node(hexagon_nn_nn_id id, uint32_t node_id, uint32_t operation,
	hexagon_nn_padding_type padding, const hexagon_nn_input *inputs, uint32_t num_inputs,
	const hexagon_nn_output *outputs, uint32_t num_outputs);

int hexagon_nn_append_const_node(hexagon_nn_nn_id id, uint32_t node_id, uint32_t batches,
	uint32_t height, uint32_t width, uint32_t depth, const uint8_t *data, uint32_t data_len);

#endif
