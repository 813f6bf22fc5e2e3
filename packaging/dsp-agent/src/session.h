/* One client's connection: its graph on hexagon_nn and the replies to its requests. */
#ifndef DSP_AGENT_SESSION_H
#define DSP_AGENT_SESSION_H

#include <stdint.h>

#include "../hexagon_nn_api.h"
#include "wire.h"

struct tap_slot {
    uint32_t node_id;
    uint32_t output_idx;
    uint32_t max_bytes;
    unsigned char *buf;       /* execute_new's output buffer for this slot */
};

enum graph_state { GRAPH_NONE, GRAPH_BUILDING, GRAPH_PREPARED };

struct agent_config {
    const unsigned char *token;   /* NULL: any token is accepted */
    uint32_t token_len;
    uint32_t max_frame;
    uint32_t counter_kind;        /* 0 cycles (a device), 1 simulated nanoseconds (stand-in) */
    const char *description;
};

struct session {
    int fd;
    const struct agent_config *cfg;
    int greeted;
    hexagon_nn_nn_id graph;       /* 0: none */
    enum graph_state state;
    uint32_t nodes_total;
    uint32_t n_slots;
    struct tap_slot *slots;       /* in prepare order: slot i is execute_new's output i */
    uint32_t *by_key;             /* slot indices sorted by (node_id, output_idx) */
    uint32_t output_node;         /* the OUTPUT node the agent appended for the slots */
};

/* Handles one whole frame. Returns 0 to go on, -1 to close the connection (framing lost, a
 * refused HELLO, or a reply that could not be sent). */
int session_handle(struct session *s, const struct frame *f);

/* Tears down the session's graph (at the end of a connection, or on TEARDOWN). */
void session_teardown(struct session *s);

#endif
