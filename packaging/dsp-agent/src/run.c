/* PREPARE and EXECUTE (docs/protocol.md §3.3, 3.4).
 *
 * Taps: hexagon_nn's execute returns only what the graph's OUTPUT node copies out (spec §2.6,
 * §4.2), and a prepared graph cannot change (spec §2.1). So at PREPARE the agent appends one
 * OUTPUT node whose inputs are the tap slots, in order, and allocates one buffer per slot;
 * EXECUTE passes those buffers as execute_new's outputs and sends the wanted slots back. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

#define TAP_HEADER 56u
#define MAX_TAP_TOTAL (1024u * 1024u * 1024u)   /* all tap buffers of one graph */

static int key_cmp(uint32_t node_a, uint32_t idx_a, uint32_t node_b, uint32_t idx_b)
{
    if (node_a != node_b)
        return node_a < node_b ? -1 : 1;
    return idx_a < idx_b ? -1 : idx_a > idx_b;
}

static const struct tap_slot *sort_base;

static int slot_order(const void *a, const void *b)
{
    const struct tap_slot *x = &sort_base[*(const uint32_t *)a];
    const struct tap_slot *y = &sort_base[*(const uint32_t *)b];
    return key_cmp(x->node_id, x->output_idx, y->node_id, y->output_idx);
}

/* The slot index of (node, idx), or -1: a binary search over by_key. */
static long find_slot(const struct session *s, uint32_t node, uint32_t idx)
{
    size_t lo = 0, hi = s->n_slots;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct tap_slot *t = &s->slots[s->by_key[mid]];
        int c = key_cmp(t->node_id, t->output_idx, node, idx);
        if (c == 0)
            return (long)s->by_key[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Reads the slots into s->slots and s->by_key; 1 after an error reply. Only one session runs
 * at a time (one client), so the qsort context in a static is safe. */
static int read_slots(struct session *s, const struct frame *f, uint32_t n)
{
    uint32_t rid = f->request_id;
    s->slots = calloc(n ? n : 1, sizeof *s->slots);
    s->by_key = malloc((n ? n : 1) * sizeof *s->by_key);
    if (!s->slots || !s->by_key)
        return reply_error(s, rid, ERR_INTERNAL, 0, 0, "PREPARE: out of memory"), 1;
    s->n_slots = n;
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *p = f->meta + 16 + (size_t)16 * i;
        struct tap_slot *t = &s->slots[i];
        t->node_id = le32(p);
        t->output_idx = le32(p + 4);
        t->max_bytes = le32(p + 8);
        s->by_key[i] = i;
        total += t->max_bytes;
        if (t->max_bytes > s->cfg->max_frame - TAP_HEADER)
            return reply_error(s, rid, ERR_NOT_SUPPORTED, t->node_id, 0, "PREPARE: tap "
                               "0x%x:%u asks for %u bytes, more than one frame of this agent "
                               "carries (%u)", t->node_id, t->output_idx, t->max_bytes,
                               s->cfg->max_frame - TAP_HEADER), 1;
    }
    if (total > MAX_TAP_TOTAL)
        return reply_error(s, rid, ERR_NOT_SUPPORTED, 0, 0, "PREPARE: the taps ask for %llu "
                           "bytes of buffers; this agent allows %u per graph",
                           (unsigned long long)total, MAX_TAP_TOTAL), 1;
    sort_base = s->slots;
    qsort(s->by_key, n, sizeof *s->by_key, slot_order);
    for (uint32_t i = 1; i < n; i++) {
        const struct tap_slot *a = &s->slots[s->by_key[i - 1]];
        const struct tap_slot *b = &s->slots[s->by_key[i]];
        if (a->node_id == b->node_id && a->output_idx == b->output_idx)
            return reply_error(s, rid, ERR_MALFORMED, a->node_id, 0, "PREPARE: tap slot "
                               "0x%x:%u appears twice", a->node_id, a->output_idx), 1;
    }
    for (uint32_t i = 0; i < n; i++) {
        struct tap_slot *t = &s->slots[i];
        if (t->max_bytes && !(t->buf = malloc(t->max_bytes)))
            return reply_error(s, rid, ERR_INTERNAL, t->node_id, 0, "PREPARE: cannot "
                               "allocate %u bytes for tap 0x%x:%u", t->max_bytes, t->node_id,
                               t->output_idx), 1;
    }
    return 0;
}

static int append_output_node(struct session *s, uint32_t rid, uint32_t out_id)
{
    uint32_t op = 0;
    hexagon_nn_input *in = malloc(s->n_slots * sizeof *in);
    if (!in)
        return reply_error(s, rid, ERR_INTERNAL, 0, 0, "PREPARE: out of memory"), 1;
    for (uint32_t i = 0; i < s->n_slots; i++) {
        in[i].src_id = s->slots[i].node_id;
        in[i].output_idx = s->slots[i].output_idx;
    }
    int nn = hexagon_nn_op_name_to_id("OUTPUT", &op);
    if (nn == 0)
        nn = hexagon_nn_append_node(s->graph, out_id, op, HEXSCOPE_NN_PAD_NA, in,
                                    (int)s->n_slots, NULL, 0);
    free(in);
    if (nn == 0)
        return 0;
    char log[MAX_MESSAGE];
    take_log(s, log, sizeof log);
    drop_graph(s);
    return reply_error(s, rid, ERR_APPEND_FAILED, out_id, nn, "hexagon_nn refused the tap "
                       "OUTPUT node 0x%x (%d); the graph is torn down%s%s", out_id, nn,
                       *log ? "; log: " : "", log), 1;
}

int handle_prepare(struct session *s, const struct frame *f)
{
    uint32_t rid = f->request_id;
    if (f->meta_len < 16)
        return reply_error(s, rid, ERR_MALFORMED, 0, 0, "PREPARE: metadata of %u bytes, at "
                           "least 16 needed", f->meta_len);
    uint32_t out_id = le32(f->meta), n = le32(f->meta + 4), debug = le32(f->meta + 8);
    if (n > MAX_COUNT)
        return reply_error(s, rid, ERR_MALFORMED, 0, 0, "PREPARE: %u taps is over the limit "
                           "of %u", n, MAX_COUNT);
    if (f->meta_len != 16 + (uint64_t)16 * n || f->data_len != 0)
        return reply_error(s, rid, ERR_MALFORMED, 0, 0, "PREPARE: %u taps need %llu bytes of "
                           "metadata and no data; got %u and %u", n,
                           16 + (unsigned long long)16 * n, f->meta_len, f->data_len);
    if (s->state != GRAPH_BUILDING)
        return reply_error(s, rid, ERR_STATE, 0, 0, "PREPARE needs a graph under construction "
                           "(%s)", s->state == GRAPH_PREPARED ? "it is already prepared"
                           : "there is none");
    forget_slots(s);
    if (read_slots(s, f, n)) {
        forget_slots(s);
        return 0;
    }
    hexagon_nn_set_debug_level(s->graph, debug > INT_MAX ? INT_MAX : (int)debug);
    if (n && append_output_node(s, rid, out_id))
        return 0;
    s->output_node = out_id;
    int nn = hexagon_nn_prepare(s->graph);
    if (nn != 0) {
        char log[MAX_MESSAGE];
        take_log(s, log, sizeof log);
        /* spec §2.1: a failed prepare leaves the graph unusable */
        drop_graph(s);
        return reply_error(s, rid, ERR_PREPARE_FAILED, 0, nn, "%s", *log ? log
                           : "hexagon_nn_prepare failed (no log text)");
    }
    s->state = GRAPH_PREPARED;
    uint32_t n_nodes = 0, lo = 0, hi = 0;
    if (hexagon_nn_get_num_nodes_in_graph(s->graph, &n_nodes) != 0)
        n_nodes = 0;
    if (hexagon_nn_last_execution_cycles(s->graph, &lo, &hi) != 0)
        lo = hi = 0;
    unsigned char meta[16];
    put_le32(meta, n_nodes);
    put_le32(meta + 4, lo);
    put_le32(meta + 8, hi);
    put_le32(meta + 12, 0);
    return send_frame(s->fd, MSG_PREPARE_OK, rid, meta, sizeof meta, NULL, 0);
}

/* hexagon_nn logs "execute() failed on node id=%x err=%d" (spec §2.6); 0 when absent. */
static uint32_t failed_node(const char *log)
{
    const char *at = strstr(log, "failed on node id=");
    return at ? (uint32_t)strtoul(at + strlen("failed on node id="), NULL, 16) : 0;
}

static int send_tap(struct session *s, uint32_t rid, const struct tap_slot *t,
                    const hexagon_nn_tensordef *out)
{
    unsigned char meta[TAP_HEADER];
    uint32_t len = out->data_valid_len;
    if (len > t->max_bytes)
        len = t->max_bytes;
    memset(meta, 0, sizeof meta);
    put_le32(meta, t->node_id);
    put_le32(meta + 4, t->output_idx);
    put_le32(meta + 8, out->batches);
    put_le32(meta + 12, out->height);
    put_le32(meta + 16, out->width);
    put_le32(meta + 20, out->depth);
    /* execute_new carries neither the type nor the layout (spec §4.2) */
    put_le32(meta + 24, UNKNOWN_U32);
    put_le32(meta + 28, UNKNOWN_U32);
    return send_frame(s->fd, MSG_TAP, rid, meta, sizeof meta, t->buf, len);
}

static int execute_done(struct session *s, uint32_t rid, int32_t status, uint32_t node,
                        uint32_t sent, const char *message)
{
    unsigned char meta[24];
    uint32_t lo = 0, hi = 0;
    if (hexagon_nn_last_execution_cycles(s->graph, &lo, &hi) != 0)
        lo = hi = 0;
    size_t len = strlen(message);
    put_le32(meta, (uint32_t)status);
    put_le32(meta + 4, node);
    put_le32(meta + 8, sent);
    put_le32(meta + 12, lo);
    put_le32(meta + 16, hi);
    put_le32(meta + 20, 0);
    return send_frame(s->fd, MSG_EXECUTE_DONE, rid, meta, sizeof meta, message,
                      (uint32_t)(len > MAX_MESSAGE ? MAX_MESSAGE : len));
}

/* Runs the graph and replies; the request was checked by handle_execute. */
static int run(struct session *s, uint32_t rid, const struct frame *f, uint32_t n_in,
               uint32_t n_taps, hexagon_nn_tensordef *in, hexagon_nn_tensordef *out)
{
    const unsigned char *desc = f->meta + 16;
    size_t pos = 0;
    for (uint32_t i = 0; i < n_in; i++, desc += 32) {
        uint32_t len = le32(desc + 16);
        in[i] = (hexagon_nn_tensordef){ le32(desc), le32(desc + 4), le32(desc + 8),
                                        le32(desc + 12), len ? f->data + pos : NULL,
                                        (int32_t)len, len, 0 };
        pos += len;
    }
    for (uint32_t j = 0; j < s->n_slots; j++)
        out[j] = (hexagon_nn_tensordef){ 0, 0, 0, 0, s->slots[j].buf,
                                         (int32_t)s->slots[j].max_bytes, 0, 0 };
    int nn = hexagon_nn_execute_new(s->graph, n_in ? in : NULL, (int)n_in,
                                    s->n_slots ? out : NULL, (int)s->n_slots);
    if (nn != 0 && nn != 2) {
        /* the run stopped at the failing node and OUTPUT never ran: no taps (protocol §3.4) */
        char log[MAX_MESSAGE];
        take_log(s, log, sizeof log);
        return execute_done(s, rid, nn, failed_node(log), 0, *log ? log
                            : "hexagon_nn_execute_new failed (no log text)");
    }
    /* 2: OUTPUT ran and copied every slot that fit (spec §4.2); those are sent (§3.4) and a
     * slot whose data did not fit (valid length over its size) is not */
    const unsigned char *refs = desc;
    uint32_t sent = 0, wanted = n_taps ? n_taps : s->n_slots;
    for (uint32_t k = 0; k < wanted; k++) {
        uint32_t j = n_taps ? (uint32_t)find_slot(s, le32(refs + 8 * k), le32(refs + 8 * k + 4))
                            : k;
        if (out[j].data_valid_len == 0 || out[j].data_valid_len > s->slots[j].max_bytes)
            continue;
        if (send_tap(s, rid, &s->slots[j], &out[j]))
            return -1;
        sent++;
    }
    if (nn == 2) {
        char log[MAX_MESSAGE];
        take_log(s, log, sizeof log);
        return execute_done(s, rid, 2, s->output_node, sent, *log ? log
                            : "an output slot was too small for its tensor");
    }
    return execute_done(s, rid, 0, 0, sent, "");
}

int handle_execute(struct session *s, const struct frame *f)
{
    uint32_t rid = f->request_id;
    if (f->meta_len < 16)
        return reply_error(s, rid, ERR_MALFORMED, 0, 0, "EXECUTE: metadata of %u bytes, at "
                           "least 16 needed", f->meta_len);
    uint32_t n_in = le32(f->meta), n_taps = le32(f->meta + 4);
    if (n_in > MAX_COUNT || n_taps > MAX_COUNT)
        return reply_error(s, rid, ERR_MALFORMED, 0, 0, "EXECUTE: %u inputs and %u taps; at "
                           "most %u of each", n_in, n_taps, MAX_COUNT);
    uint64_t need = 16 + (uint64_t)32 * n_in + (uint64_t)8 * n_taps;
    if (need != f->meta_len)
        return reply_error(s, rid, ERR_MALFORMED, 0, 0, "EXECUTE: %u inputs and %u taps need "
                           "%llu bytes of metadata, the frame has %u", n_in, n_taps,
                           (unsigned long long)need, f->meta_len);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n_in; i++)
        sum += le32(f->meta + 16 + (size_t)32 * i + 16);
    if (sum != f->data_len)
        return reply_error(s, rid, ERR_MALFORMED, 0, 0, "EXECUTE: %u bytes of data, the "
                           "inputs declare %llu", f->data_len, (unsigned long long)sum);
    if (s->state != GRAPH_PREPARED)
        return reply_error(s, rid, ERR_STATE, 0, 0, "EXECUTE needs a prepared graph");
    const unsigned char *refs = f->meta + 16 + (size_t)32 * n_in;
    for (uint32_t k = 0; k < n_taps; k++) {
        uint32_t node = le32(refs + 8 * k), idx = le32(refs + 8 * k + 4);
        if (find_slot(s, node, idx) < 0)
            return reply_error(s, rid, ERR_BAD_TAP, node, 0, "tap 0x%x:%u was not prepared "
                               "(taps are fixed at PREPARE: %u slots)", node, idx, s->n_slots);
    }
    hexagon_nn_tensordef *in = calloc(n_in ? n_in : 1, sizeof *in);
    hexagon_nn_tensordef *out = calloc(s->n_slots ? s->n_slots : 1, sizeof *out);
    int rc;
    if (!in || !out)
        rc = reply_error(s, rid, ERR_INTERNAL, 0, 0, "EXECUTE: out of memory");
    else
        rc = run(s, rid, f, n_in, n_taps, in, out);
    free(in);
    free(out);
    return rc;
}
