/* A host stand-in for hexagon_nn's API (hexagon_nn_api.h), written from the spec, for testing
 * the device agent without a DSP. It keeps graphs, checks what the library checks at append
 * and prepare (for the ops it knows), computes the data-movement ops exactly
 * (standin_graph.c), keeps a log per graph, and counts executions and host nanoseconds per
 * node. When HEXAGON_NN_STANDIN_TRACE names a file, every API call is appended to it as one
 * line ("call arguments -> result"), so a test can see what the agent asked of hexagon_nn. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin.h"

const char *const standin_op_names[N_OPS] = {
#include "op_names.inc"
};

#define MAX_GRAPHS 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct graph *graphs[MAX_GRAPHS];
static hexagon_nn_nn_id next_id = 1;

static void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void trace(const char *fmt, ...)
{
    const char *path = getenv("HEXAGON_NN_STANDIN_TRACE");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
}

void standin_log(struct graph *g, int level, int line, const char *fmt, ...)
{
    if (!g || level > g->debug_level)
        return;
    char msg[1024], entry[1100];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);       /* spec §5.2: cut at 1023 characters */
    va_end(ap);
    int n = snprintf(entry, sizeof entry, "standin.c:%d:%s\n", line, msg);
    if (n < 0 || g->log_len + (size_t)n > LOG_CAP - 1)
        return;                                /* spec §5.3: an entry that does not fit */
    memcpy(g->log + g->log_len, entry, (size_t)n);
    g->log_len += (size_t)n;
}

static struct graph **slot_of(hexagon_nn_nn_id id)
{
    for (int i = 0; i < MAX_GRAPHS; i++)
        if (graphs[i] && graphs[i]->id == id)
            return &graphs[i];
    return NULL;
}

static struct graph *find_graph(hexagon_nn_nn_id id)
{
    struct graph **s = slot_of(id);
    return s ? *s : NULL;
}

int hexagon_nn_config(void)
{
    trace("config -> 0");
    return 0;
}

int hexagon_nn_version(int *ver)
{
    *ver = 0x00021401;        /* spec §2.11: the version the stand-in follows */
    trace("version -> 0 0x%08x", *ver);
    return 0;
}

int hexagon_nn_op_name_to_id(const char *name, uint32_t *op)
{
    *op = 0xFFFFFFFFu;
    for (uint32_t i = 0; name && *name && i < N_OPS; i++)
        if (strcmp(standin_op_names[i], name) == 0)
            *op = i;
    int rc = *op == 0xFFFFFFFFu ? -1 : 0;
    trace("op_name_to_id %s -> %d %u", name ? name : "(null)", rc, *op);
    return rc;
}

int hexagon_nn_init(hexagon_nn_nn_id *out)
{
    pthread_mutex_lock(&lock);
    struct graph **free_slot = NULL;
    for (int i = 0; i < MAX_GRAPHS && !free_slot; i++)
        if (!graphs[i])
            free_slot = &graphs[i];
    struct graph *g = free_slot ? calloc(1, sizeof *g) : NULL;
    if (g)
        g->log = malloc(LOG_CAP);
    if (!g || !g->log) {
        if (g)
            free(g);
        *out = 0;
        pthread_mutex_unlock(&lock);
        trace("init -> -1");
        return -1;
    }
    g->id = next_id;
    next_id = next_id == 0x7FFFFFFF ? 1 : next_id + 1;
    *free_slot = g;
    *out = g->id;
    pthread_mutex_unlock(&lock);
    trace("init -> 0 graph=%d", *out);
    return 0;
}

int hexagon_nn_set_debug_level(hexagon_nn_nn_id id, int level)
{
    pthread_mutex_lock(&lock);
    struct graph *g = find_graph(id);
    if (g)
        g->debug_level = level < 0 ? 0 : level;
    pthread_mutex_unlock(&lock);
    trace("set_debug_level graph=%d level=%d -> %d", id, level, g ? 0 : -1);
    return g ? 0 : -1;
}

static struct node *new_node(struct graph *g, uint32_t node_id)
{
    if (node_id == 0)
        return errlog(g, "node id cannot be 0"), NULL;
    if (g->n_nodes == g->cap_nodes) {
        uint32_t cap = g->cap_nodes ? 2 * g->cap_nodes : 16;
        struct node *grown = realloc(g->nodes, cap * sizeof *grown);
        if (!grown)
            return errlog(g, "out of memory"), NULL;
        g->nodes = grown;
        g->cap_nodes = cap;
    }
    struct node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->id = node_id;
    return n;
}

/* Port counts checked at append (spec §2.3, §4.27) for the ops the stand-in knows. */
static int counts_ok(struct graph *g, uint32_t node_id, uint32_t op, int n_in, int n_out)
{
    int lo_in = 0, hi_in = 1 << 30, lo_out = 0, hi_out = 1 << 30;
    switch (op) {
    case OP_INPUT: hi_in = 0; break;
    case OP_OUTPUT: hi_out = 0; break;
    case OP_CHECK: lo_in = hi_in = 2; hi_out = 0; break;
    case OP_FLATTEN: lo_in = 1; hi_in = 2; lo_out = hi_out = 1; break;
    default: break;
    }
    if (n_in < lo_in || n_in > hi_in)
        return errlog(g, "node %X (%s): bad input count %d", node_id, standin_op_names[op],
                      n_in), 0;
    if (n_out < lo_out || n_out > hi_out)
        return errlog(g, "node %X (%s): bad output count %d", node_id, standin_op_names[op],
                      n_out), 0;
    return 1;
}

static int append_node_locked(struct graph *g, uint32_t node_id, uint32_t op, int32_t padding,
                              const hexagon_nn_input *in, int n_in,
                              const hexagon_nn_output *out, int n_out)
{
    if (g->state != ST_CONSTRUCTION)
        return errlog(g, "append: graph not under construction"), -1;
    if (op >= N_OPS)
        return errlog(g, "node id=0x%x: op %u is out of range", node_id, op), -1;
    if (op == OP_CONST)
        return errlog(g, "OOPS: called regular const ctor. don't do that."), -1;
    if (n_in < 0 || n_out < 0 || !counts_ok(g, node_id, op, n_in, n_out))
        return errlog(g, "node id=0x%x ctor fail", node_id), -1;
    for (int k = 0; k < n_in; k++)
        if (in[k].src_id == 0)
            return errlog(g, "fatal: const tensor in generic input"), -1;
    struct node *n = new_node(g, node_id);
    if (!n)
        return -1;
    n->op = op;
    n->padding = (uint32_t)padding;
    n->n_in = (uint32_t)n_in;
    n->n_out = (uint32_t)n_out;
    n->in = malloc((n_in ? (size_t)n_in : 1) * sizeof *n->in);
    n->defs = malloc((n_out ? (size_t)n_out : 1) * sizeof *n->defs);
    n->out = calloc(n_out ? (size_t)n_out : 1, sizeof *n->out);
    if (!n->in || !n->defs || !n->out) {
        standin_free_node(n);
        return errlog(g, "out of memory"), -1;
    }
    if (n_in)
        memcpy(n->in, in, (size_t)n_in * sizeof *in);
    for (int k = 0; k < n_out; k++) {
        n->defs[k] = out[k];
        uint32_t r = out[k].rank > 8 ? 8 : out[k].rank;
        for (int j = 0; j < 4; j++) {          /* the definition shape (spec §1.4 step 2) */
            int at = (int)r - 4 + j;
            n->out[k].shape[j] = at >= 0 ? out[k].max_sizes[at] : 1;
        }
    }
    g->n_nodes++;
    return 0;
}

int hexagon_nn_append_node(hexagon_nn_nn_id id, uint32_t node_id, uint32_t operation,
                           hexagon_nn_padding_type padding, const hexagon_nn_input *inputs,
                           int inputsLen, const hexagon_nn_output *outputs, int outputsLen)
{
    pthread_mutex_lock(&lock);
    struct graph *g = find_graph(id);
    int rc = g ? append_node_locked(g, node_id, operation, padding, inputs, inputsLen,
                                    outputs, outputsLen) : -1;
    pthread_mutex_unlock(&lock);
    char refs[160] = "";
    size_t used = 0;
    for (int k = 0; k < inputsLen && used + 24 < sizeof refs; k++)
        used += (size_t)snprintf(refs + used, sizeof refs - used, "%s0x%x:%u", k ? "," : "",
                                 inputs[k].src_id, inputs[k].output_idx);
    trace("append_node graph=%d node=0x%x op=%u(%s) pad=%d inputs=[%s] n_outputs=%d -> %d", id,
          node_id, operation, operation < N_OPS ? standin_op_names[operation] : "?", padding,
          refs, outputsLen, rc);
    return rc;
}

int hexagon_nn_append_const_node(hexagon_nn_nn_id id, uint32_t node_id, uint32_t batches,
                                 uint32_t height, uint32_t width, uint32_t depth,
                                 const unsigned char *data, int dataLen)
{
    pthread_mutex_lock(&lock);
    struct graph *g = find_graph(id);
    int rc = -1;
    struct node *n = NULL;
    if (g && g->state != ST_CONSTRUCTION)
        errlog(g, "append: graph not under construction");
    else if (g && dataLen >= 0 && (n = new_node(g, node_id)) != NULL) {
        n->op = OP_CONST;
        n->is_const = 1;
        n->n_out = 1;
        n->out = calloc(1, sizeof *n->out);
        n->defs = calloc(1, sizeof *n->defs);
        unsigned char *copy = dataLen ? malloc((size_t)dataLen) : NULL;
        if (n->out && n->defs && (copy || !dataLen)) {
            if (dataLen)
                memcpy(copy, data, (size_t)dataLen);
            *n->out = (struct tensor){ { batches, height, width, depth }, copy,
                                       (uint32_t)dataLen, (uint32_t)dataLen };
            g->n_nodes++;
            rc = 0;
        } else {
            free(copy);
            standin_free_node(n);
            errlog(g, "out of memory");
        }
    }
    pthread_mutex_unlock(&lock);
    trace("append_const_node graph=%d node=0x%x shape=%ux%ux%ux%u len=%d -> %d", id, node_id,
          batches, height, width, depth, dataLen, rc);
    return rc;
}

int hexagon_nn_prepare(hexagon_nn_nn_id id)
{
    pthread_mutex_lock(&lock);
    struct graph *g = find_graph(id);
    int rc = -1;
    if (g && g->state != ST_CONSTRUCTION)
        errlog(g, "prepare: Graph not under construction");
    else if (g) {
        rc = standin_prepare(g);
        g->state = rc == 0 ? ST_PREPARED : ST_DEAD;   /* spec §2.1: a failed prepare is dead */
    }
    uint32_t n = g ? g->n_nodes : 0;
    pthread_mutex_unlock(&lock);
    trace("prepare graph=%d -> %d nodes=%u", id, rc, n);
    return rc;
}

int hexagon_nn_execute_new(hexagon_nn_nn_id id, const hexagon_nn_tensordef *inputs,
                           int inputsLen, hexagon_nn_tensordef *outputs, int outputsLen)
{
    pthread_mutex_lock(&lock);
    struct graph *g = find_graph(id);
    int rc = -1;
    struct tensor *slots = calloc(outputsLen > 0 ? (size_t)outputsLen : 1, sizeof *slots);
    if (g && slots && inputsLen >= 0 && outputsLen >= 0) {
        for (int j = 0; j < outputsLen; j++)
            slots[j] = (struct tensor){ { outputs[j].batches, outputs[j].height,
                                          outputs[j].width, outputs[j].depth },
                                        outputs[j].data, outputs[j].dataLen < 0 ? 0u
                                        : (uint32_t)outputs[j].dataLen, 0 };
        g->inputs = inputs;
        g->n_inputs = (uint32_t)inputsLen;
        g->slots = slots;
        g->n_slots = (uint32_t)outputsLen;
        if (g->state != ST_PREPARED)
            errlog(g, "graph not prepared");
        else
            rc = standin_run(g);
        for (int j = 0; j < outputsLen; j++) {  /* reported back even after a failure */
            outputs[j].batches = slots[j].shape[0];
            outputs[j].height = slots[j].shape[1];
            outputs[j].width = slots[j].shape[2];
            outputs[j].depth = slots[j].shape[3];
            outputs[j].data_valid_len = slots[j].data_size;
        }
        g->inputs = NULL;
        g->slots = NULL;
    }
    free(slots);
    pthread_mutex_unlock(&lock);
    trace("execute_new graph=%d n_inputs=%d n_outputs=%d -> %d", id, inputsLen, outputsLen, rc);
    return rc;
}

int hexagon_nn_getlog(hexagon_nn_nn_id id, unsigned char *buf, int bufLen)
{
    pthread_mutex_lock(&lock);
    struct graph *g = find_graph(id);
    int rc = -1;
    if (bufLen > 0) {
        const char *text = g ? g->log : "id not found\n";
        size_t len = g ? g->log_len : strlen(text);
        if (len > (size_t)bufLen - 1)
            len = (size_t)bufLen - 1;
        memcpy(buf, text, len);
        buf[len] = '\0';
    }
    if (g) {
        g->log_len = 0;        /* spec §2.8: reading clears, even what did not fit */
        rc = 0;
    }
    pthread_mutex_unlock(&lock);
    trace("getlog graph=%d len=%d -> %d", id, bufLen, rc);
    return rc;
}

int hexagon_nn_get_perfinfo(hexagon_nn_nn_id id, hexagon_nn_perfinfo *info, int info_len,
                            uint32_t *n_items)
{
    pthread_mutex_lock(&lock);
    struct graph *g = find_graph(id);
    int rc = -1;
    uint32_t m = 0;
    /* the capacity check counts every node, Consts included (spec §2.9) */
    if (g && info_len >= 0 && (uint32_t)info_len >= g->n_nodes) {
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const struct node *n = &g->nodes[i];
            if (n->is_const)
                continue;
            info[m++] = (hexagon_nn_perfinfo){ n->id, n->executions, (uint32_t)n->counter,
                                               (uint32_t)(n->counter >> 32) };
        }
        rc = 0;
    }
    *n_items = m;
    pthread_mutex_unlock(&lock);
    trace("get_perfinfo graph=%d max=%d -> %d n=%u", id, info_len, rc, m);
    return rc;
}

int hexagon_nn_reset_perfinfo(hexagon_nn_nn_id id, uint32_t event)
{
    pthread_mutex_lock(&lock);
    struct graph *g = find_graph(id);
    for (uint32_t i = 0; g && i < g->n_nodes; i++)
        g->nodes[i].executions = 0, g->nodes[i].counter = 0;
    pthread_mutex_unlock(&lock);
    trace("reset_perfinfo graph=%d event=%u -> %d", id, event, g ? 0 : -1);
    return g ? 0 : -1;
}

int hexagon_nn_last_execution_cycles(hexagon_nn_nn_id id, uint32_t *lo, uint32_t *hi)
{
    pthread_mutex_lock(&lock);
    struct graph *g = find_graph(id);
    uint64_t c = g ? g->last_cycles : 0;
    pthread_mutex_unlock(&lock);
    *lo = (uint32_t)c;
    *hi = (uint32_t)(c >> 32);
    trace("last_execution_cycles graph=%d -> %d", id, g ? 0 : -1);
    return g ? 0 : -1;
}

int hexagon_nn_get_num_nodes_in_graph(hexagon_nn_nn_id id, uint32_t *num)
{
    pthread_mutex_lock(&lock);
    struct graph *g = find_graph(id);
    int rc = g && g->state == ST_PREPARED ? 0 : -1;
    *num = rc == 0 ? g->n_nodes : 0;
    pthread_mutex_unlock(&lock);
    trace("get_num_nodes_in_graph graph=%d -> %d %u", id, rc, *num);
    return rc;
}

int hexagon_nn_teardown(hexagon_nn_nn_id id)
{
    pthread_mutex_lock(&lock);
    struct graph **s = slot_of(id);
    if (s) {
        struct graph *g = *s;
        for (uint32_t i = 0; i < g->n_nodes; i++)
            standin_free_node(&g->nodes[i]);
        free(g->nodes);
        free(g->log);
        free(g);
        *s = NULL;
    }
    pthread_mutex_unlock(&lock);
    trace("teardown graph=%d -> %d", id, s ? 0 : -1);
    return s ? 0 : -1;
}
