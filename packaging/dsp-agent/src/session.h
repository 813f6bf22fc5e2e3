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
    uint64_t max_graph;           /* bytes of UPLOAD frames one graph may hold */
};

struct session {
    int fd;
    const struct agent_config *cfg;
    int greeted;
    hexagon_nn_nn_id graph;       /* 0: none */
    enum graph_state state;
    uint32_t nodes_total;
    uint64_t graph_bytes;         /* UPLOAD bytes of the graph under construction */
    uint32_t n_slots;
    struct tap_slot *slots;       /* in prepare order: slot i is execute_new's output i */
    uint32_t *by_key;             /* slot indices sorted by (node_id, output_idx) */
    uint32_t output_node;         /* the OUTPUT node the agent appended for the slots */
};

/* Checks a HELLO (the first frame of a connection): 0 when it is good (nothing is sent yet:
 * the caller answers HELLO_OK with session_greet, or BUSY), 1 when it was refused with the
 * connection kept (malformed), -1 when refused and the connection must close. */
int session_check_hello(struct session *s, const struct frame *f);

/* Answers a good HELLO with HELLO_OK; from now on the session is served. */
int session_greet(struct session *s, uint32_t rid);

/* Handles one whole frame after the greeting. Returns 0 to go on, -1 to close the connection (framing lost, a
 * refused HELLO, or a reply that could not be sent). */
int session_handle(struct session *s, const struct frame *f);

/* Tears down the session's graph (at the end of a connection, or on TEARDOWN). */
void session_teardown(struct session *s);

#endif
