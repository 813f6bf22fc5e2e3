/* The stand-in's prepare and the ops it computes. It computes only data-movement ops whose
 * results are exact by definition: INPUT, OUTPUT, Nop, Flatten, Check and Const (spec §4.1-
 * §4.5, §4.14). Every other op is refused at prepare with a log line saying so. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "standin.h"

uint64_t standin_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int standin_implements(uint32_t op)
{
    return op == OP_INPUT || op == OP_OUTPUT || op == OP_NOP || op == OP_CONST
        || op == OP_CHECK || op == OP_FLATTEN;
}

void standin_free_node(struct node *n)
{
    if (n->is_const && n->out)
        free(n->out[0].data);
    else
        for (uint32_t k = 0; n->out && k < n->n_out; k++)
            free(n->out[k].data);
    free(n->in);
    free(n->defs);
    free(n->out);
    free(n->bound);
}

/* ---- prepare (spec §2.5) ------------------------------------------------------------------ */

struct key {
    uint32_t id, pos;
};

static int key_order(const void *a, const void *b)
{
    const struct key *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static const struct key *find(const struct key *keys, uint32_t n, uint32_t id)
{
    struct key probe = { id, 0 };
    size_t lo = 0, hi = n;
    while (lo < hi) {                  /* first key with this id */
        size_t mid = lo + (hi - lo) / 2;
        if (key_order(&keys[mid], &probe) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && keys[lo].id == id ? &keys[lo] : NULL;
}

/* The capacity of an output definition (spec §1.4; none of our ops has d32 output). */
static uint32_t capacity(const hexagon_nn_output *d)
{
    uint32_t rank = d->rank > 8 ? 8 : d->rank;
    uint64_t size = d->elementsize;
    for (uint32_t k = rank > 4 ? rank - 4 : 0; k < rank; k++)
        size *= d->max_sizes[k];
    size = (size + 127) / 128 * 128;
    return size > 0xFFFFFF80u ? 0xFFFFFF80u : (uint32_t)size;
}

/* Checks references (each input names an earlier node's existing output), then removes dead
 * nodes (no consumer, not zero-output) and moves the Consts first, keeping relative order. */
static int index_and_check(struct graph *g, struct key *keys)
{
    for (uint32_t i = 0; i < g->n_nodes; i++)
        keys[i] = (struct key){ g->nodes[i].id, i };
    qsort(keys, g->n_nodes, sizeof *keys, key_order);
    for (uint32_t i = 1; i < g->n_nodes; i++)
        if (keys[i].id == keys[i - 1].id)
            return errlog(g, "re-use of node id 0x%X", keys[i].id), -1;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        struct node *n = &g->nodes[i];
        if (!standin_implements(n->op))
            return errlog(g, "node 0x%x: op %s (id %u) is not computed by the host stand-in "
                          "(it computes INPUT, OUTPUT, Nop, Flatten, Check, Const)", n->id,
                          standin_op_names[n->op], n->op), -1;
        if (n->op == OP_NOP && n->n_in != n->n_out)
            return errlog(g, "node 0x%x: Nop: inputs != outputs", n->id), -1;
        for (uint32_t k = 0; k < n->n_in; k++) {
            const struct key *src = find(keys, g->n_nodes, n->in[k].src_id);
            if (!src)
                return errlog(g, "can't find id 0x%x", n->in[k].src_id), -1;
            if (n->in[k].output_idx >= g->nodes[src->pos].n_out)
                return errlog(g, "FATAL: Bad output %u on node ID 0x%x", n->in[k].output_idx,
                              n->in[k].src_id), -1;
            if (src->pos >= i)
                return errlog(g, "input 0x%X:%u refers to downstream node 0x%X", n->id, k,
                              n->in[k].src_id), -1;
        }
    }
    return 0;
}

static void remove_dead_and_gather_consts(struct graph *g, struct key *keys)
{
    uint32_t *refs = calloc(g->n_nodes ? g->n_nodes : 1, sizeof *refs);
    char *dead = calloc(g->n_nodes ? g->n_nodes : 1, 1);
    for (uint32_t i = 0; i < g->n_nodes; i++)
        for (uint32_t k = 0; k < g->nodes[i].n_in; k++)
            refs[find(keys, g->n_nodes, g->nodes[i].in[k].src_id)->pos]++;
    for (uint32_t i = g->n_nodes; i-- > 0;) {
        struct node *n = &g->nodes[i];
        if (refs[i] || n->n_out == 0)
            continue;
        dead[i] = 1;
        for (uint32_t k = 0; k < n->n_in; k++)
            refs[find(keys, g->n_nodes, n->in[k].src_id)->pos]--;
    }
    struct node *list = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *list);
    uint32_t m = 0;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < g->n_nodes; i++)
            if (!dead[i] && (g->nodes[i].is_const == (pass == 0)))
                list[m++] = g->nodes[i];
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (dead[i]) {
            logmsg(g, 2, "removed dead node 0x%x", g->nodes[i].id);
            standin_free_node(&g->nodes[i]);
        }
    free(g->nodes);
    g->nodes = list;
    g->n_nodes = g->cap_nodes = m;
    free(refs);
    free(dead);
}

static int bind_and_allocate(struct graph *g, struct key *keys)
{
    for (uint32_t i = 0; i < g->n_nodes; i++)
        keys[i] = (struct key){ g->nodes[i].id, i };
    qsort(keys, g->n_nodes, sizeof *keys, key_order);
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        struct node *n = &g->nodes[i];
        n->bound = calloc(n->n_in ? n->n_in : 1, sizeof *n->bound);
        if (!n->bound)
            return errlog(g, "out of memory"), -1;
        for (uint32_t k = 0; k < n->n_in; k++)
            n->bound[k] = &g->nodes[find(keys, g->n_nodes, n->in[k].src_id)->pos]
                              .out[n->in[k].output_idx];
        if (n->is_const)
            continue;
        for (uint32_t k = 0; k < n->n_out; k++) {
            struct tensor *t = &n->out[k];
            t->max_size = capacity(&n->defs[k]);
            if (t->max_size && !(t->data = malloc(t->max_size)))
                return errlog(g, "node 0x%x: cannot allocate %u bytes", n->id, t->max_size),
                    -1;
        }
    }
    return 0;
}

int standin_prepare(struct graph *g)
{
    uint64_t start = standin_now_ns();
    struct key *keys = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *keys);
    int rc = keys ? index_and_check(g, keys) : -1;
    if (rc == 0) {
        remove_dead_and_gather_consts(g, keys);
        rc = bind_and_allocate(g, keys);
    }
    free(keys);
    g->last_cycles = standin_now_ns() - start;
    return rc;
}

/* ---- execute (spec §2.6, §4) -------------------------------------------------------------- */

static int run_input(struct graph *g, struct node *n)
{
    if (g->n_inputs != n->n_out)
        return errlog(g, "Expected %u, got %u inputs", n->n_out, g->n_inputs), -1;
    int rc = 0;
    for (uint32_t k = 0; k < n->n_out; k++) {
        const hexagon_nn_tensordef *in = &g->inputs[k];
        struct tensor *t = &n->out[k];
        uint32_t len = in->dataLen < 0 ? 0 : (uint32_t)in->dataLen;
        if (len > t->max_size) {          /* the general path copies dataLen bytes (§4.1) */
            errlog(g, "out %u too small (%u > %u)", k, len, t->max_size);
            memset(t->shape, 0, sizeof t->shape);
            t->data_size = 0;
            rc = -1;
            continue;
        }
        t->shape[0] = in->batches;
        t->shape[1] = in->height;
        t->shape[2] = in->width;
        t->shape[3] = in->depth;
        if (len)
            memcpy(t->data, in->data, len);
        t->data_size = len;
    }
    return rc;
}

static int run_output(struct graph *g, struct node *n)
{
    if (g->n_slots != n->n_in)
        return errlog(g, "bad # outputs"), -1;
    int rc = 0;
    for (uint32_t k = 0; k < n->n_in; k++) {
        const struct tensor *in = n->bound[k];
        struct tensor *slot = &g->slots[k];
        if (in->data_size == 0)
            continue;
        memcpy(slot->shape, in->shape, sizeof slot->shape);
        slot->data_size = in->data_size;
        if (in->data_size > slot->max_size) {
            errlog(g, "output %u too small (%u > %u)", k, in->data_size, slot->max_size);
            rc = 2;                       /* NN_EXECUTE_BUFFER_SIZE_ERROR */
            continue;
        }
        memcpy(slot->data, in->data, in->data_size);
    }
    return rc;
}

static int run_nop(struct node *n)
{
    for (uint32_t k = 0; k < n->n_in; k++) {
        const struct tensor *in = n->bound[k];
        struct tensor *out = &n->out[k];
        memcpy(out->shape, in->shape, sizeof out->shape);
        /* matches the library: too large an input leaves stale data and is not an error */
        if (in->data_size > out->max_size)
            continue;
        if (in->data_size)
            memcpy(out->data, in->data, in->data_size);
        out->data_size = in->data_size;
    }
    return 0;
}

static int run_flatten(struct graph *g, struct node *n)
{
    const struct tensor *in = n->bound[0];
    struct tensor *out = &n->out[0];
    if (in->data_size > out->max_size)
        return errlog(g, "out too small. %u > %u", in->data_size, out->max_size), -1;
    uint32_t shape[4] = { 1, 1, 1, in->shape[0] * in->shape[1] * in->shape[2] * in->shape[3] };
    memcpy(out->shape, shape, sizeof shape);
    if (in->data_size)
        memcpy(out->data, in->data, in->data_size);
    out->data_size = in->data_size;
    return 0;
}

static int run_check(struct graph *g, struct node *n)
{
    static const char *const field[4] = { "batches", "height", "width", "depth" };
    const struct tensor *dut = n->bound[0], *ref = n->bound[1];
    for (int k = 0; k < 4; k++)
        if (dut->shape[k] != ref->shape[k])
            return errlog(g, "check fail %s %u != %u", field[k], dut->shape[k],
                          ref->shape[k]), -1;
    if (dut->data_size != ref->data_size)
        return errlog(g, "check fail data_size %u != %u", dut->data_size, ref->data_size), -1;
    if (dut->data_size && memcmp(dut->data, ref->data, dut->data_size) != 0)
        return errlog(g, "data mismatch"), -1;
    return 0;
}

static int run_node(struct graph *g, struct node *n)
{
    switch (n->op) {
    case OP_INPUT: return run_input(g, n);
    case OP_OUTPUT: return run_output(g, n);
    case OP_NOP: return run_nop(n);
    case OP_FLATTEN: return run_flatten(g, n);
    case OP_CHECK: return run_check(g, n);
    default: return errlog(g, "op %u not computed", n->op), -1;
    }
}

/* Testing aid: HEXAGON_NN_STANDIN_NODE_MS makes every node take at least that long, so a
 * test can act while a graph runs (a second client, a connection cut mid-run). */
static void slow_down(void)
{
    const char *ms = getenv("HEXAGON_NN_STANDIN_NODE_MS");
    long n = ms ? strtol(ms, NULL, 10) : 0;
    if (n > 0) {
        struct timespec ts = { n / 1000, (n % 1000) * 1000000L };
        nanosleep(&ts, NULL);
    }
}

/* Nodes in list order from the first non-Const; the first failure stops the run. */
int standin_run(struct graph *g)
{
    uint64_t start = standin_now_ns();
    int rc = 0;
    for (uint32_t i = 0; i < g->n_nodes && rc == 0; i++) {
        struct node *n = &g->nodes[i];
        if (n->is_const)
            continue;
        uint64_t t0 = standin_now_ns();
        rc = run_node(g, n);
        slow_down();
        n->counter += standin_now_ns() - t0;
        n->executions++;
        if (rc != 0) {
            errlog(g, "execute() failed on node id=%x err=%d", n->id, rc);
            if (rc != 2)
                errlog(g, "fail in execute_inner()");
        }
    }
    g->last_cycles = standin_now_ns() - start;
    return rc;
}
