/* Frames of docs/protocol.md on a socket: the constants, little-endian access, reading one
 * frame within its deadlines and writing one reply. */
#ifndef DSP_AGENT_WIRE_H
#define DSP_AGENT_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define PROTO_VERSION 1u
#define HEADER_SIZE 24u
#define MAX_META (16u * 1024u * 1024u)
#define HARD_MAX_FRAME (1024u * 1024u * 1024u)
#define MAX_TOKEN 256u
#define MAX_NAME 64u
#define MAX_COUNT 1000000u
#define MAX_MESSAGE 4096u
#define UNKNOWN_U32 0xFFFFFFFFu

enum msg_type {
    MSG_HELLO = 0x01, MSG_UPLOAD = 0x02, MSG_PREPARE = 0x03, MSG_EXECUTE = 0x04,
    MSG_PERFINFO = 0x05, MSG_GETLOG = 0x06, MSG_TEARDOWN = 0x07,
    MSG_HELLO_OK = 0x81, MSG_UPLOAD_OK = 0x82, MSG_PREPARE_OK = 0x83, MSG_TAP = 0x84,
    MSG_EXECUTE_DONE = 0x85, MSG_PERFINFO_OK = 0x86, MSG_LOG = 0x87, MSG_TEARDOWN_OK = 0x88,
    MSG_BUSY = 0xE0, MSG_ERROR = 0xEE
};

enum error_code {
    ERR_BAD_MAGIC = 1, ERR_BAD_VERSION = 2, ERR_BAD_TYPE = 3, ERR_TOO_LARGE = 4,
    ERR_MALFORMED = 5, ERR_AUTH = 6, ERR_STATE = 7, ERR_APPEND_FAILED = 8,
    ERR_PREPARE_FAILED = 9, ERR_EXECUTE_FAILED = 10, ERR_BAD_TAP = 11, ERR_TIMEOUT = 12,
    ERR_NOT_SUPPORTED = 13, ERR_INTERNAL = 14
};

struct frame {
    uint16_t version;
    uint16_t type;
    uint32_t request_id;
    uint32_t meta_len;
    uint32_t data_len;
    unsigned char *meta;     /* meta_len bytes (NULL when 0) */
    unsigned char *data;     /* data_len bytes (NULL when 0) */
};

/* What read_frame found. */
enum read_status {
    READ_OK,            /* a whole frame */
    READ_CLOSED,        /* the peer closed or the socket failed: nothing to answer */
    READ_IDLE,          /* no first byte within the idle timeout: close without a reply */
    READ_FATAL          /* framing lost: answer with *err_code / err_text, then close */
};

struct read_limits {
    uint32_t max_frame;       /* meta + data */
    int idle_ms;              /* -1: wait forever for the first byte */
    int frame_ms;             /* the rest of a frame once its first byte arrived */
    int64_t deadline_ms;      /* 0, or a wire_now_ms() by which the whole frame must be in:
                               * READ_IDLE if no byte came by then, ERR_TIMEOUT if the rest
                               * did not (a peer trickling a byte now and then is cut) */
};

/* Monotonic milliseconds. */
int64_t wire_now_ms(void);

uint32_t le32(const unsigned char *p);
void put_le32(unsigned char *p, uint32_t v);
void put_le16(unsigned char *p, uint16_t v);

/* Reads one frame. On READ_FATAL, fills err_code and err_text (and f->request_id when the
 * header was read). The caller frees f->meta and f->data with frame_free. */
enum read_status read_frame(int fd, const struct read_limits *lim, struct frame *f,
                            int *err_code, char *err_text, size_t err_cap);
void frame_free(struct frame *f);

/* Writes one frame; returns 0, or -1 when the connection is gone. */
int send_frame(int fd, uint16_t type, uint32_t request_id, const void *meta, uint32_t meta_len,
               const void *data, uint32_t data_len);
int send_error(int fd, uint32_t request_id, uint32_t code, uint32_t node_id, int32_t nn_rc,
               const char *message);

/* Half-close, drain for a moment, close: closing with unread input would reset the
 * connection and the peer could lose the reply we just sent. */
void linger_close(int fd);

#endif
