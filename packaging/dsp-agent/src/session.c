/* HELLO, UPLOAD, PERFINFO, GETLOG and TEARDOWN (docs/protocol.md §3.1, 3.2, 3.5-3.7), and the
 * dispatch of one frame. Every request is checked whole before hexagon_nn is called. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

#define UPLOAD_HEADER 24u
#define NODE_RECORD 32u
#define INPUT_REF 8u
#define OUTPUT_DESC 48u
#define FLAG_NEW_GRAPH 1u
#define FLAG_CONST 1u
#define DEFAULT_LOG 65536u
#define MAX_LOG (1024u * 1024u)   /* hexagon_nn's own log holds 512 KiB (spec §5.3) */

int reply_error(struct session *s, uint32_t rid, int code, uint32_t node_id, int32_t nn_rc,
                const char *fmt, ...)
{
    char text[MAX_MESSAGE + 1];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "dsp-agent: error %d: %s\n", code, text);
    return send_error(s->fd, rid, (uint32_t)code, node_id, nn_rc, text);
}

size_t take_log(struct session *s, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (!s->graph || cap < 2)
        return 0;
    if (hexagon_nn_getlog(s->graph, (unsigned char *)buf, (int)cap) != 0)
        buf[0] = '\0';
    buf[cap - 1] = '\0';
    return strlen(buf);
}

void forget_slots(struct session *s)
{
    for (uint32_t i = 0; i < s->n_slots; i++)
        free(s->slots[i].buf);
    free(s->slots);
    free(s->by_key);
    s->slots = NULL;
    s->by_key = NULL;
    s->n_slots = 0;
}

void drop_graph(struct session *s)
{
    forget_slots(s);
    if (s->graph)
        hexagon_nn_teardown(s->graph);
    s->graph = 0;
    s->state = GRAPH_NONE;
    s->nodes_total = 0;
    s->graph_bytes = 0;
}

void session_teardown(struct session *s)
{
    drop_graph(s);
}

/* ---- HELLO ------------------------------------------------------------------------------ */

/* Constant time in the token's content: every byte of the agent's token is compared, and a
 * length difference only adds to the accumulated difference (protocol §3.1). */
static int token_ok(const struct agent_config *cfg, const unsigned char *tok, uint32_t len)
{
    if (!cfg->token)
        return 1;
    unsigned diff = len != cfg->token_len;
    for (uint32_t i = 0; i < cfg->token_len; i++)
        diff |= cfg->token[i] ^ (i < len ? tok[i] : 0u);
    return diff == 0;
}

int session_check_hello(struct session *s, const struct frame *f)
{
    uint32_t rid = f->request_id;
    if (f->meta_len != 8) {
        reply_error(s, rid, ERR_MALFORMED, 0, 0, "HELLO: metadata of %u bytes, expected 8",
                    f->meta_len);
        return 1;
    }
    uint32_t version = (uint32_t)(f->meta[0] | f->meta[1] << 8);
    uint32_t token_len = le32(f->meta + 4);
    if (token_len > MAX_TOKEN || token_len != f->data_len) {
        reply_error(s, rid, ERR_AUTH, 0, 0, "HELLO: token of %u bytes (declared %u, at most "
                    "%u)", f->data_len, token_len, MAX_TOKEN);
        return -1;
    }
    if (version != PROTO_VERSION) {
        reply_error(s, rid, ERR_BAD_VERSION, 0, 0, "protocol version %u is not spoken here; "
                    "this agent speaks version %u", version, PROTO_VERSION);
        return -1;
    }
    if (!token_ok(s->cfg, f->data, token_len)) {
        reply_error(s, rid, ERR_AUTH, 0, 0, token_len ? "wrong token"
                    : "this agent needs a token");
        return -1;
    }
    return 0;
}

int session_greet(struct session *s, uint32_t rid)
{
    int nn_version = 0;
    if (hexagon_nn_version(&nn_version) != 0)
        nn_version = 0;
    unsigned char meta[28];
    put_le16(meta, PROTO_VERSION);
    put_le16(meta + 2, 0);
    put_le32(meta + 4, (uint32_t)nn_version);
    put_le32(meta + 8, s->cfg->max_frame);
    put_le32(meta + 12, MAX_META);
    put_le32(meta + 16, 1);                      /* agent_kind: device */
    put_le32(meta + 20, s->cfg->counter_kind);
    put_le32(meta + 24, 0);
    s->greeted = 1;
    const char *d = s->cfg->description;
    return send_frame(s->fd, MSG_HELLO_OK, rid, meta, sizeof meta, d, (uint32_t)strlen(d));
}

/* ---- UPLOAD ----------------------------------------------------------------------------- */

struct upload {
    uint32_t flags, n_nodes, n_inputs, n_outputs, names_len;
    const unsigned char *rec, *refs, *outs, *names;
    uint32_t *op_ids;            /* resolved by name, per node */
};

/* Checks the whole frame (sizes, sums, names, ranks) before anything is appended. */
static int check_upload(struct session *s, const struct frame *f, struct upload *u)
{
    uint32_t rid = f->request_id;
    if (f->meta_len < UPLOAD_HEADER)
        return reply_error(s, rid, ERR_MALFORMED, 0, 0, "UPLOAD: metadata of %u bytes, at "
                           "least %u needed", f->meta_len, UPLOAD_HEADER), 1;
    u->flags = le32(f->meta);
    u->n_nodes = le32(f->meta + 4);
    u->n_inputs = le32(f->meta + 8);
    u->n_outputs = le32(f->meta + 12);
    u->names_len = le32(f->meta + 16);
    if (u->n_nodes > MAX_COUNT)
        return reply_error(s, rid, ERR_MALFORMED, 0, 0, "UPLOAD: %u nodes is over the limit "
                           "of %u", u->n_nodes, MAX_COUNT), 1;
    uint64_t need = UPLOAD_HEADER + (uint64_t)NODE_RECORD * u->n_nodes
        + (uint64_t)INPUT_REF * u->n_inputs + (uint64_t)OUTPUT_DESC * u->n_outputs
        + u->names_len;
    if (need != f->meta_len)
        return reply_error(s, rid, ERR_MALFORMED, 0, 0, "UPLOAD: the header's counts need "
                           "%llu bytes of metadata, the frame has %u",
                           (unsigned long long)need, f->meta_len), 1;
    u->rec = f->meta + UPLOAD_HEADER;
    u->refs = u->rec + (size_t)NODE_RECORD * u->n_nodes;
    u->outs = u->refs + (size_t)INPUT_REF * u->n_inputs;
    u->names = u->outs + (size_t)OUTPUT_DESC * u->n_outputs;
    uint64_t sum_in = 0, sum_out = 0, sum_names = 0, sum_data = 0;
    for (uint32_t i = 0; i < u->n_nodes; i++) {
        const unsigned char *r = u->rec + (size_t)NODE_RECORD * i;
        uint32_t id = le32(r), n_in = le32(r + 16), n_out = le32(r + 20);
        uint32_t name_len = le32(r + 24);
        if (name_len > MAX_NAME)
            return reply_error(s, rid, ERR_MALFORMED, id, 0, "UPLOAD: node 0x%x: op name of "
                               "%u bytes (at most %u)", id, name_len, MAX_NAME), 1;
        if ((le32(r + 12) & FLAG_CONST) && (n_in != 0 || n_out != 1))
            return reply_error(s, rid, ERR_MALFORMED, id, 0, "UPLOAD: const 0x%x has %u "
                               "inputs and %u outputs (0 and 1)", id, n_in, n_out), 1;
        sum_in += n_in;
        sum_out += n_out;
        sum_names += name_len;
        sum_data += le32(r + 28);
    }
    if (sum_in != u->n_inputs || sum_out != u->n_outputs || sum_names != u->names_len)
        return reply_error(s, rid, ERR_MALFORMED, 0, 0, "UPLOAD: the nodes declare %llu "
                           "inputs, %llu outputs and %llu name bytes; the header says %u, %u "
                           "and %u", (unsigned long long)sum_in, (unsigned long long)sum_out,
                           (unsigned long long)sum_names, u->n_inputs, u->n_outputs,
                           u->names_len), 1;
    if (sum_data != f->data_len)
        return reply_error(s, rid, ERR_MALFORMED, 0, 0, "UPLOAD: %u bytes of data, the "
                           "consts declare %llu", f->data_len,
                           (unsigned long long)sum_data), 1;
    for (uint32_t k = 0; k < u->n_outputs; k++) {
        uint32_t rank = le32(u->outs + (size_t)OUTPUT_DESC * k);
        if (rank > 8)
            return reply_error(s, rid, ERR_MALFORMED, 0, 0, "UPLOAD: output descriptor %u "
                               "has rank %u (at most 8)", k, rank), 1;
    }
    for (uint32_t k = 0; k < u->names_len; k++)
        if (u->names[k] == 0 || u->names[k] >= 0x80)
            return reply_error(s, rid, ERR_MALFORMED, 0, 0, "UPLOAD: op names must be "
                               "ASCII without NUL (byte %u of the names is 0x%02x)", k,
                               u->names[k]), 1;
    if (!(u->flags & FLAG_NEW_GRAPH) && s->state != GRAPH_BUILDING)
        return reply_error(s, rid, ERR_STATE, 0, 0, "UPLOAD without NEW_GRAPH, but no "
                           "graph is under construction (%s)", s->state == GRAPH_PREPARED
                           ? "the graph is prepared" : "there is no graph"), 1;
    return 0;
}

/* The op name is authoritative (protocol §3.2): resolve every name before appending. */
static int resolve_names(struct session *s, uint32_t rid, struct upload *u)
{
    const unsigned char *name = u->names;
    for (uint32_t i = 0; i < u->n_nodes; i++) {
        const unsigned char *r = u->rec + (size_t)NODE_RECORD * i;
        uint32_t len = le32(r + 24);
        char text[MAX_NAME + 1];
        memcpy(text, name, len);
        text[len] = '\0';
        name += len;
        u->op_ids[i] = UNKNOWN_U32;
        if (le32(r + 12) & FLAG_CONST)
            continue;
        if (hexagon_nn_op_name_to_id(text, &u->op_ids[i]) != 0) {
            drop_graph(s);     /* APPEND_FAILED leaves the graph dead (protocol §3.8) */
            return reply_error(s, rid, ERR_APPEND_FAILED, le32(r), -1, "node 0x%x: op \"%s\" "
                               "(client op id %u) is not known to this hexagon_nn; nothing "
                               "of this frame was appended and the graph is torn down",
                               le32(r), text, le32(r + 4)), 1;
        }
    }
    return 0;
}

static void read_output(const unsigned char *p, hexagon_nn_output *o)
{
    o->rank = le32(p);
    for (int k = 0; k < 8; k++)
        o->max_sizes[k] = le32(p + 4 + 4 * k);
    o->elementsize = le32(p + 36);
    o->zero_offset = (int32_t)le32(p + 40);
    uint32_t bits = le32(p + 44);
    memcpy(&o->stepsize, &bits, sizeof bits);
}

/* Appends node i; returns hexagon_nn's value. */
static int append_one(struct session *s, const struct upload *u, uint32_t i,
                      const hexagon_nn_input *in, const hexagon_nn_output *out,
                      const unsigned char *data)
{
    const unsigned char *r = u->rec + (size_t)NODE_RECORD * i;
    uint32_t id = le32(r), n_in = le32(r + 16), n_out = le32(r + 20);
    if (le32(r + 12) & FLAG_CONST) {
        /* (b, h, w, d) from the last four of the first `rank` sizes, as the library sizes
         * an output definition (spec §1.4). */
        uint32_t rank = out->rank, dims[4];
        for (int k = 0; k < 4; k++) {
            int at = (int)rank - 4 + k;
            dims[k] = at >= 0 ? out->max_sizes[at] : 1;
        }
        uint32_t len = le32(r + 28);
        return hexagon_nn_append_const_node(s->graph, id, dims[0], dims[1], dims[2], dims[3],
                                            len ? data : NULL, (int)len);
    }
    return hexagon_nn_append_node(s->graph, id, u->op_ids[i], (hexagon_nn_padding_type)
                                  le32(r + 8), n_in ? in : NULL, (int)n_in,
                                  n_out ? out : NULL, (int)n_out);
}

static int append_all(struct session *s, uint32_t rid, const struct upload *u,
                      const unsigned char *data)
{
    hexagon_nn_input *in = calloc(u->n_inputs ? u->n_inputs : 1, sizeof *in);
    hexagon_nn_output *out = calloc(u->n_outputs ? u->n_outputs : 1, sizeof *out);
    int rc = 0;
    if (!in || !out) {
        rc = reply_error(s, rid, ERR_INTERNAL, 0, 0, "UPLOAD: out of memory");
        goto done;
    }
    for (uint32_t k = 0; k < u->n_inputs; k++) {
        in[k].src_id = le32(u->refs + (size_t)INPUT_REF * k);
        in[k].output_idx = le32(u->refs + (size_t)INPUT_REF * k + 4);
    }
    for (uint32_t k = 0; k < u->n_outputs; k++)
        read_output(u->outs + (size_t)OUTPUT_DESC * k, &out[k]);
    size_t i_pos = 0, o_pos = 0, d_pos = 0, n_pos = 0;
    for (uint32_t i = 0; i < u->n_nodes; i++) {
        const unsigned char *r = u->rec + (size_t)NODE_RECORD * i;
        int nn = append_one(s, u, i, in + i_pos, out + o_pos, data ? data + d_pos : NULL);
        if (nn != 0) {
            char name[MAX_NAME + 1], log[MAX_MESSAGE];
            memcpy(name, u->names + n_pos, le32(r + 24));
            name[le32(r + 24)] = '\0';
            take_log(s, log, sizeof log);
            drop_graph(s);             /* dead: the next UPLOAD must carry NEW_GRAPH */
            rc = reply_error(s, rid, ERR_APPEND_FAILED, le32(r), nn, "hexagon_nn refused "
                             "node 0x%x (%s): append returned %d; the graph is torn down%s%s",
                             le32(r), name, nn, *log ? "; log: " : "", log);
            goto done;
        }
        s->nodes_total++;
        i_pos += le32(r + 16);
        o_pos += le32(r + 20);
        d_pos += le32(r + 28);
        n_pos += le32(r + 24);
    }
    unsigned char meta[8];
    put_le32(meta, s->nodes_total);
    put_le32(meta + 4, 0);
    rc = send_frame(s->fd, MSG_UPLOAD_OK, rid, meta, sizeof meta, NULL, 0);
done:
    free(in);
    free(out);
    return rc;
}

static int handle_upload(struct session *s, const struct frame *f)
{
    struct upload u;
    uint32_t rid = f->request_id;
    int bad = check_upload(s, f, &u);
    if (bad)
        return bad < 0 ? -1 : 0;
    u.op_ids = malloc((u.n_nodes ? u.n_nodes : 1) * sizeof *u.op_ids);
    if (!u.op_ids)
        return reply_error(s, rid, ERR_INTERNAL, 0, 0, "UPLOAD: out of memory");
    int rc = resolve_names(s, rid, &u);
    if (rc) {
        free(u.op_ids);
        return rc < 0 ? -1 : 0;
    }
    /* the graph's size, in the bytes of the UPLOAD frames that built it, is capped: a client
     * must not grow the library's copy without limit */
    uint64_t size = (uint64_t)f->meta_len + f->data_len;
    uint64_t total = size + ((u.flags & FLAG_NEW_GRAPH) ? 0 : s->graph_bytes);
    if (total > s->cfg->max_graph) {
        free(u.op_ids);
        drop_graph(s);
        return reply_error(s, rid, ERR_APPEND_FAILED, 0, 0, "UPLOAD: the graph would hold "
                           "%llu bytes of UPLOAD frames, over this agent's limit of %llu (its "
                           "--max-graph-bytes); nothing of this frame was appended and the "
                           "graph is torn down", (unsigned long long)total,
                           (unsigned long long)s->cfg->max_graph);
    }
    if (u.flags & FLAG_NEW_GRAPH) {
        drop_graph(s);
        hexagon_nn_nn_id g = 0;
        int nn = hexagon_nn_init(&g);
        if (nn != 0 || g == 0) {
            free(u.op_ids);
            return reply_error(s, rid, ERR_INTERNAL, 0, nn, "hexagon_nn_init failed (%d)", nn);
        }
        s->graph = g;
        s->state = GRAPH_BUILDING;
    }
    s->graph_bytes = total;
    rc = append_all(s, rid, &u, f->data);
    free(u.op_ids);
    return rc;
}

/* ---- PERFINFO, GETLOG, TEARDOWN ---------------------------------------------------------- */

static int handle_perfinfo(struct session *s, const struct frame *f)
{
    uint32_t rid = f->request_id;
    if (f->meta_len != 8 || f->data_len != 0)
        return reply_error(s, rid, ERR_MALFORMED, 0, 0, "PERFINFO: %u bytes of metadata and "
                           "%u of data, expected 8 and 0", f->meta_len, f->data_len);
    if (s->state != GRAPH_PREPARED)
        return reply_error(s, rid, ERR_STATE, 0, 0, "PERFINFO needs a prepared graph");
    uint32_t n_nodes = 0;
    if (hexagon_nn_get_num_nodes_in_graph(s->graph, &n_nodes) != 0)
        n_nodes = 0;
    /* get_perfinfo checks its capacity against every node, Consts included (spec §2.9). */
    uint32_t cap = n_nodes + 1;
    hexagon_nn_perfinfo *info = calloc(cap, sizeof *info);
    if (!info)
        return reply_error(s, rid, ERR_INTERNAL, 0, 0, "PERFINFO: out of memory");
    uint32_t n = 0;
    int nn = hexagon_nn_get_perfinfo(s->graph, info, (int)cap, &n);
    if (nn != 0 || n > cap) {
        free(info);
        return reply_error(s, rid, ERR_INTERNAL, 0, nn, "hexagon_nn_get_perfinfo failed (%d) "
                           "with room for %u records", nn, cap);
    }
    if (le32(f->meta) & 1u)
        hexagon_nn_reset_perfinfo(s->graph, 0);
    size_t meta_len = 16 + (size_t)16 * n;
    unsigned char *meta = malloc(meta_len);
    if (!meta) {
        free(info);
        return reply_error(s, rid, ERR_INTERNAL, 0, 0, "PERFINFO: out of memory");
    }
    put_le32(meta, n);
    put_le32(meta + 4, s->cfg->counter_kind);
    put_le32(meta + 8, 0);
    put_le32(meta + 12, 0);
    for (uint32_t i = 0; i < n; i++) {
        unsigned char *p = meta + 16 + (size_t)16 * i;
        put_le32(p, info[i].node_id);
        put_le32(p + 4, info[i].executions);
        put_le32(p + 8, info[i].counter_lo);
        put_le32(p + 12, info[i].counter_hi);
    }
    int rc = send_frame(s->fd, MSG_PERFINFO_OK, rid, meta, (uint32_t)meta_len, NULL, 0);
    free(meta);
    free(info);
    return rc;
}

static int handle_getlog(struct session *s, const struct frame *f)
{
    uint32_t rid = f->request_id;
    if (f->meta_len != 8 || f->data_len != 0)
        return reply_error(s, rid, ERR_MALFORMED, 0, 0, "GETLOG: %u bytes of metadata and "
                           "%u of data, expected 8 and 0", f->meta_len, f->data_len);
    uint32_t max = le32(f->meta);
    if (max == 0)
        max = DEFAULT_LOG;
    if (max > MAX_LOG)
        max = MAX_LOG;
    char *buf = malloc((size_t)max + 1);
    if (!buf)
        return reply_error(s, rid, ERR_INTERNAL, 0, 0, "GETLOG: out of memory");
    size_t len = take_log(s, buf, (size_t)max + 1);
    unsigned char meta[8];
    /* getlog drops what does not fit; a full buffer is the only sign of it. */
    put_le32(meta, len >= max ? 1u : 0u);
    put_le32(meta + 4, 0);
    int rc = send_frame(s->fd, MSG_LOG, rid, meta, sizeof meta, buf, (uint32_t)len);
    free(buf);
    return rc;
}

static int handle_teardown(struct session *s, const struct frame *f)
{
    if (f->meta_len != 0 || f->data_len != 0)
        return reply_error(s, f->request_id, ERR_MALFORMED, 0, 0, "TEARDOWN carries nothing; "
                           "got %u bytes of metadata and %u of data", f->meta_len, f->data_len);
    drop_graph(s);
    return send_frame(s->fd, MSG_TEARDOWN_OK, f->request_id, NULL, 0, NULL, 0);
}

/* ---- dispatch --------------------------------------------------------------------------- */

int session_handle(struct session *s, const struct frame *f)
{
    uint32_t rid = f->request_id;
    if (f->type < MSG_HELLO || f->type > MSG_TEARDOWN)
        return reply_error(s, rid, ERR_BAD_TYPE, 0, 0, "message type 0x%04x is not a request",
                           f->type);
    if (!s->greeted) {               /* main.c greets; nothing is served before */
        reply_error(s, rid, ERR_AUTH, 0, 0, "the first message must be HELLO");
        return -1;
    }
    switch (f->type) {
    case MSG_HELLO: return reply_error(s, rid, ERR_STATE, 0, 0, "HELLO was already sent");
    case MSG_UPLOAD: return handle_upload(s, f);
    case MSG_PREPARE: return handle_prepare(s, f);
    case MSG_EXECUTE: return handle_execute(s, f);
    case MSG_PERFINFO: return handle_perfinfo(s, f);
    case MSG_GETLOG: return handle_getlog(s, f);
    default: return handle_teardown(s, f);
    }
}
