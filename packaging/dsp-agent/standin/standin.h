/* The host stand-in for hexagon_nn: internal types shared by its API (standin.c) and its
 * prepare and op kernels (standin_graph.c). See README.md, "The host stand-in". */
#ifndef HEXSCOPE_STANDIN_H
#define HEXSCOPE_STANDIN_H

#include <stddef.h>
#include <stdint.h>

#include "../hexagon_nn_api.h"

#define OP_INPUT 0u
#define OP_OUTPUT 1u
#define OP_NOP 2u
#define OP_CONST 3u
#define OP_CHECK 4u
#define OP_FLATTEN 14u
#define N_OPS 434u
#define LOG_CAP (512u * 1024u)      /* spec §5.3: 524,287 usable bytes */

struct tensor {
    uint32_t shape[4];
    unsigned char *data;
    uint32_t max_size;
    uint32_t data_size;
};

struct node {
    uint32_t id, op, padding, n_in, n_out;
    hexagon_nn_input *in;
    hexagon_nn_output *defs;
    struct tensor *out;           /* n_out tensors (a Const: its one tensor, data owned) */
    struct tensor **bound;        /* inputs bound at prepare */
    int is_const;
    uint32_t executions;
    uint64_t counter;             /* nanoseconds of host time (not DSP cycles) */
};

enum graph_state { ST_CONSTRUCTION, ST_PREPARED, ST_DEAD };

struct graph {
    hexagon_nn_nn_id id;
    enum graph_state state;
    int debug_level;
    struct node *nodes;
    uint32_t n_nodes, cap_nodes;
    char *log;
    size_t log_len;
    uint64_t last_cycles;
    /* while execute_new runs */
    const hexagon_nn_tensordef *inputs;
    uint32_t n_inputs;
    struct tensor *slots;
    uint32_t n_slots;
};

extern const char *const standin_op_names[N_OPS];

/* Appends one entry "standin:<line>:<message>\n" to the graph's log (spec §5.2), if level <=
 * the debug level; an entry that does not fit is dropped (spec §5.3). */
void standin_log(struct graph *g, int level, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define errlog(g, ...) standin_log((g), 0, __LINE__, __VA_ARGS__)
#define logmsg(g, lvl, ...) standin_log((g), (lvl), __LINE__, __VA_ARGS__)

int standin_implements(uint32_t op);
int standin_prepare(struct graph *g);
int standin_run(struct graph *g);
void standin_free_node(struct node *n);
uint64_t standin_now_ns(void);

#endif
