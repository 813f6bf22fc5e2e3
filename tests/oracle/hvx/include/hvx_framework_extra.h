/* Framework pieces the Hexagon oracle adds to the x86 oracle's nn_graph.h stub (written for
 * Hexscope): what the Supernode files need beyond it. Single threaded, as the x86 stub. */
#ifndef HVX_FRAMEWORK_EXTRA_H
#define HVX_FRAMEWORK_EXTRA_H 1
struct nn_os_bufstack_t { nn_mutex_t mutex; void **top; };
static inline void nn_os_bufstack_init(struct nn_os_bufstack_t *b) { b->top = NULL; }
static inline void *nn_os_bufstack_pop(struct nn_os_bufstack_t *b)
{ void **t = b->top; if (t) b->top = (void **)*t; return t; }
static inline void nn_os_bufstack_push(struct nn_os_bufstack_t *b, void *v)
{ void **blk = v; *blk = b->top; b->top = blk; }
static inline void nn_os_bufstack_push_nonthreadsafe(struct nn_os_bufstack_t *b, void *v)
{ nn_os_bufstack_push(b, v); }
#include <nn_graph_os_checkpoint.h>
#endif
