/* Helpers shared by the request handlers (session.c, run.c). */
#ifndef DSP_AGENT_SESSION_INTERNAL_H
#define DSP_AGENT_SESSION_INTERNAL_H

#include <stddef.h>

#include "session.h"

/* Sends a typed ERROR (message formatted like printf, cut at 4096 bytes). Returns 0, or -1
 * when the connection is gone. */
int reply_error(struct session *s, uint32_t rid, int code, uint32_t node_id, int32_t nn_rc,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Reads (and so clears) the graph's log into buf, NUL-terminated; returns its length. */
size_t take_log(struct session *s, char *buf, size_t cap);

/* The graph is gone or dead: tear it down and forget its taps. */
void drop_graph(struct session *s);

/* Frees the tap slots and their buffers. */
void forget_slots(struct session *s);

int handle_prepare(struct session *s, const struct frame *f);
int handle_execute(struct session *s, const struct frame *f);

#endif
