/* Frames on a socket (docs/protocol.md §2): every declared length is checked before anything
 * is allocated, and a frame that has begun must keep arriving (no stall over the deadline). */
#include "wire.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void put_le32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

void put_le16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

int64_t wire_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 1: readable, 0: timed out, -1: error. */
static int wait_readable(int fd, int timeout_ms)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    for (;;) {
        int rc = poll(&p, 1, timeout_ms);
        if (rc < 0 && errno == EINTR)
            continue;
        return rc < 0 ? -1 : rc > 0;
    }
}

/* 0: all n bytes, 1: no byte came for window_ms (or `until` passed), -1: closed or failed.
 * The window moves with each byte received (protocol §2.1, changed at 07:01: 10 s without
 * progress), so a large frame over a slow adb forward is not cut while it still arrives;
 * `until` (0: none) does not move. */
static int recv_exact(int fd, unsigned char *buf, size_t n, int window_ms, int64_t until)
{
    size_t got = 0;
    int64_t deadline = wire_now_ms() + window_ms;
    while (got < n) {
        int64_t left = (until && until < deadline ? until : deadline) - wire_now_ms();
        if (left <= 0)
            return 1;
        int ready = wait_readable(fd, left > 0x7fffffff ? 0x7fffffff : (int)left);
        if (ready < 0)
            return -1;
        if (ready == 0)
            continue;                 /* the loop sees the deadline */
        ssize_t k = recv(fd, buf + got, n - got, 0);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k <= 0)
            return -1;
        got += (size_t)k;
        deadline = wire_now_ms() + window_ms;
    }
    return 0;
}

void frame_free(struct frame *f)
{
    free(f->meta);
    free(f->data);
    f->meta = f->data = NULL;
}

enum read_status read_frame(int fd, const struct read_limits *lim, struct frame *f,
                            int *err_code, char *err_text, size_t err_cap)
{
    unsigned char head[HEADER_SIZE];
    memset(f, 0, sizeof *f);
    int idle = lim->idle_ms;
    if (lim->deadline_ms) {
        int64_t left = lim->deadline_ms - wire_now_ms();
        left = left < 0 ? 0 : left > 0x7fffffff ? 0x7fffffff : left;
        if (idle < 0 || left < idle)
            idle = (int)left;
    }
    int ready = wait_readable(fd, idle);
    if (ready == 0)
        return READ_IDLE;
    if (ready < 0)
        return READ_CLOSED;
    ssize_t k;
    do {
        k = recv(fd, head, 1, 0);
    } while (k < 0 && errno == EINTR);
    if (k <= 0)
        return READ_CLOSED;
    int rc = recv_exact(fd, head + 1, HEADER_SIZE - 1, lim->frame_ms, lim->deadline_ms);
    if (rc < 0)
        return READ_CLOSED;
    if (rc > 0) {
        *err_code = ERR_TIMEOUT;
        snprintf(err_text, err_cap, "frame header stalled for %d ms", lim->frame_ms);
        return READ_FATAL;
    }
    if (memcmp(head, "HXSP", 4) != 0) {
        *err_code = ERR_BAD_MAGIC;
        snprintf(err_text, err_cap, "bad magic %02x %02x %02x %02x, expected \"HXSP\"",
                 head[0], head[1], head[2], head[3]);
        return READ_FATAL;
    }
    f->version = (uint16_t)(head[4] | head[5] << 8);
    f->type = (uint16_t)(head[6] | head[7] << 8);
    f->request_id = le32(head + 8);
    f->meta_len = le32(head + 12);
    f->data_len = le32(head + 16);
    if (f->version != PROTO_VERSION) {
        *err_code = ERR_BAD_VERSION;
        snprintf(err_text, err_cap, "protocol version %u is not spoken here; this agent "
                 "speaks version %u", f->version, PROTO_VERSION);
        return READ_FATAL;
    }
    if (f->meta_len > MAX_META) {
        *err_code = ERR_TOO_LARGE;
        snprintf(err_text, err_cap, "metadata of %u bytes is over the limit of %u",
                 f->meta_len, MAX_META);
        return READ_FATAL;
    }
    if ((uint64_t)f->meta_len + f->data_len > lim->max_frame) {
        *err_code = ERR_TOO_LARGE;
        snprintf(err_text, err_cap, "frame of %llu bytes is over the limit of %u",
                 (unsigned long long)f->meta_len + f->data_len, lim->max_frame);
        return READ_FATAL;
    }
    if (f->meta_len)
        f->meta = malloc(f->meta_len);
    if (f->data_len)
        f->data = malloc(f->data_len);
    if ((f->meta_len && !f->meta) || (f->data_len && !f->data)) {
        frame_free(f);
        *err_code = ERR_TOO_LARGE;
        snprintf(err_text, err_cap, "cannot allocate a frame of %llu bytes on this device",
                 (unsigned long long)f->meta_len + f->data_len);
        return READ_FATAL;
    }
    rc = recv_exact(fd, f->meta, f->meta_len, lim->frame_ms, lim->deadline_ms);
    if (rc == 0)
        rc = recv_exact(fd, f->data, f->data_len, lim->frame_ms, lim->deadline_ms);
    if (rc != 0) {
        frame_free(f);
        if (rc < 0)
            return READ_CLOSED;
        *err_code = ERR_TIMEOUT;
        snprintf(err_text, err_cap, "frame of %llu bytes stalled for %d ms",
                 (unsigned long long)f->meta_len + f->data_len, lim->frame_ms);
        return READ_FATAL;
    }
    return READ_OK;
}

static int send_all(int fd, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int send_frame(int fd, uint16_t type, uint32_t request_id, const void *meta, uint32_t meta_len,
               const void *data, uint32_t data_len)
{
    unsigned char head[HEADER_SIZE];
    memcpy(head, "HXSP", 4);
    put_le16(head + 4, PROTO_VERSION);
    put_le16(head + 6, type);
    put_le32(head + 8, request_id);
    put_le32(head + 12, meta_len);
    put_le32(head + 16, data_len);
    put_le32(head + 20, 0);
    if (send_all(fd, head, sizeof head) || (meta_len && send_all(fd, meta, meta_len))
        || (data_len && send_all(fd, data, data_len)))
        return -1;
    return 0;
}

int send_error(int fd, uint32_t request_id, uint32_t code, uint32_t node_id, int32_t nn_rc,
               const char *message)
{
    unsigned char meta[16];
    size_t len = message ? strlen(message) : 0;
    if (len > MAX_MESSAGE)
        len = MAX_MESSAGE;
    put_le32(meta, code);
    put_le32(meta + 4, node_id);
    put_le32(meta + 8, (uint32_t)nn_rc);
    put_le32(meta + 12, 0);
    return send_frame(fd, MSG_ERROR, request_id, meta, sizeof meta, message, (uint32_t)len);
}

void linger_close(int fd)
{
    unsigned char sink[4096];
    int64_t deadline = wire_now_ms() + 500;
    shutdown(fd, SHUT_WR);
    for (;;) {
        int64_t left = deadline - wire_now_ms();
        if (left <= 0 || wait_readable(fd, (int)left) <= 0)
            break;
        if (recv(fd, sink, sizeof sink, 0) <= 0)
            break;
    }
    close(fd);
}
