/* dsp-agent: serves Hexscope's device-agent protocol (docs/protocol.md) on hexagon_nn's host
 * API. One client at a time. A connection is served only once its HELLO carried the token:
 * until then it is "greeting", and its whole first frame must arrive within the HELLO timeout
 * and hold no more than a HELLO can, so a silent or trickling peer without the token never
 * holds the client slot. An authenticated client that connects while another is served gets
 * BUSY at once, even while the DSP is running a graph for the served client. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "session.h"
#include "wire.h"

#ifndef DSP_AGENT_BACKEND
#define DSP_AGENT_BACKEND "hexagon_nn on the DSP"
#endif
#ifndef DSP_AGENT_COUNTER_KIND
#define DSP_AGENT_COUNTER_KIND 0      /* hexagon_nn's perfinfo counts cycles (spec §2.9) */
#endif
#define DSP_AGENT_VERSION "0.1.0"
#define DEFAULT_MAX_FRAME (256u * 1024u * 1024u)
#define DEFAULT_MAX_GRAPH (1024ull * 1024u * 1024u)
#define MAX_HELLO_FRAME (8u + MAX_TOKEN)   /* a HELLO with the longest token */
#define MAX_GREETING 32                    /* connections saying HELLO at once */

static struct agent_config config;
static struct read_limits limits = { DEFAULT_MAX_FRAME, 900 * 1000, 10 * 1000, 0 };
static int hello_ms = 5 * 1000;
static pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;
static int busy;
static char serving[128];

struct client {
    int fd;
    char peer[128];
};

/* The connections still greeting, oldest first. A new one beyond MAX_GREETING pushes out
 * the oldest (a real client says HELLO within a round trip). */
static pthread_mutex_t greet_lock = PTHREAD_MUTEX_INITIALIZER;
static struct client *greeting[MAX_GREETING];
static int n_greeting;

static void set_send_timeout(int fd, int seconds)
{
    struct timeval tv = { .tv_sec = seconds };
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static void start_greeting(struct client *c)
{
    pthread_mutex_lock(&greet_lock);
    if (n_greeting == MAX_GREETING) {
        fprintf(stderr, "dsp-agent: %s: pushed out, still without HELLO while %d others "
                "connect\n", greeting[0]->peer, MAX_GREETING);
        shutdown(greeting[0]->fd, SHUT_RDWR);     /* its thread wakes and closes it */
        memmove(greeting, greeting + 1, sizeof *greeting * (MAX_GREETING - 1));
        n_greeting--;
    }
    greeting[n_greeting++] = c;
    pthread_mutex_unlock(&greet_lock);
}

/* 1 if c was still greeting (and now is not), 0 if it was pushed out meanwhile. */
static int end_greeting(struct client *c)
{
    int found = 0;
    pthread_mutex_lock(&greet_lock);
    for (int i = 0; i < n_greeting; i++)
        if (greeting[i] == c) {
            memmove(greeting + i, greeting + i + 1, sizeof *greeting * (size_t)(n_greeting - i - 1));
            n_greeting--;
            found = 1;
            break;
        }
    pthread_mutex_unlock(&greet_lock);
    return found;
}

/* Reads frames until a good HELLO (returns 1 and its request id) or a refusal, a timeout or
 * the peer leaving (returns 0; the reason was sent when there was one). Before HELLO a frame
 * holds at most MAX_HELLO_FRAME bytes, checked from its header before anything is read or
 * allocated, and the whole greeting must be done within hello_ms of connecting. */
static int greet(struct client *c, struct session *s, uint32_t *rid)
{
    struct read_limits lim = { MAX_HELLO_FRAME, hello_ms, limits.frame_ms,
                               wire_now_ms() + hello_ms };
    for (;;) {
        struct frame f;
        int code = 0;
        char text[512], why[640];
        enum read_status st = read_frame(c->fd, &lim, &f, &code, text, sizeof text);
        int late = wire_now_ms() >= lim.deadline_ms;
        if (st == READ_IDLE || (st == READ_FATAL && code == ERR_TIMEOUT && late)) {
            snprintf(why, sizeof why, "no whole HELLO within %g s of connecting%s%s%s",
                     hello_ms / 1000.0, st == READ_FATAL ? " (" : "",
                     st == READ_FATAL ? text : "", st == READ_FATAL ? ")" : "");
            fprintf(stderr, "dsp-agent: %s: %s\n", c->peer, why);
            send_error(c->fd, 0, ERR_TIMEOUT, 0, 0, why);
            return 0;
        }
        if (st == READ_FATAL) {
            if (code == ERR_TOO_LARGE)
                snprintf(why, sizeof why, "before HELLO a frame holds at most %u bytes (%s)",
                         MAX_HELLO_FRAME, text);
            else
                snprintf(why, sizeof why, "%s", text);
            fprintf(stderr, "dsp-agent: %s: refused before HELLO: %s\n", c->peer, why);
            send_error(c->fd, f.request_id, (uint32_t)code, 0, 0, why);
            return 0;
        }
        if (st != READ_OK)
            return 0;
        int rc;
        *rid = f.request_id;
        if (f.type < MSG_HELLO || f.type > MSG_TEARDOWN) {   /* told; still waiting */
            rc = send_error(c->fd, f.request_id, ERR_BAD_TYPE, 0, 0, "message type is not a "
                            "request") ? -1 : 1;
        } else if (f.type != MSG_HELLO) {
            send_error(c->fd, f.request_id, ERR_AUTH, 0, 0, "the first message must be HELLO");
            rc = -1;
        } else {
            rc = session_check_hello(s, &f);
        }
        frame_free(&f);
        if (rc <= 0)
            return rc == 0;
    }
}

static void refuse(struct client *c)
{
    char text[256];
    pthread_mutex_lock(&busy_lock);
    snprintf(text, sizeof text, "agent busy: serving %s; one client at a time", serving);
    pthread_mutex_unlock(&busy_lock);
    fprintf(stderr, "dsp-agent: busy: refused %s\n", c->peer);
    set_send_timeout(c->fd, 2);
    send_frame(c->fd, MSG_BUSY, 0, NULL, 0, text, (uint32_t)strlen(text));
}

static void serve(struct client *c, struct session *s)
{
    fprintf(stderr, "dsp-agent: client %s connected\n", c->peer);
    for (;;) {
        struct frame f;
        int code = 0;
        char text[512];
        enum read_status st = read_frame(c->fd, &limits, &f, &code, text, sizeof text);
        if (st == READ_FATAL) {
            fprintf(stderr, "dsp-agent: error %d: %s\n", code, text);
            send_error(c->fd, 0, (uint32_t)code, 0, 0, text);
            break;
        }
        if (st == READ_IDLE)
            fprintf(stderr, "dsp-agent: client %s idle, closing\n", c->peer);
        if (st != READ_OK)
            break;
        int rc = session_handle(s, &f);
        frame_free(&f);
        if (rc < 0)
            break;
    }
    session_teardown(s);
    fprintf(stderr, "dsp-agent: client %s gone\n", c->peer);
}

/* One connection: greet, then serve it if no one else is served, else BUSY. */
static void *connection(void *arg)
{
    struct client *c = arg;
    struct session s = { .fd = c->fd, .cfg = &config };
    int one = 1;
    uint32_t rid = 0;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    set_send_timeout(c->fd, 60);
    int good = greet(c, &s, &rid);
    if (end_greeting(c) && good) {
        pthread_mutex_lock(&busy_lock);
        int refused = busy;
        if (!busy) {
            busy = 1;
            snprintf(serving, sizeof serving, "%s", c->peer);
        }
        pthread_mutex_unlock(&busy_lock);
        if (refused) {
            refuse(c);
        } else {
            if (session_greet(&s, rid) == 0)
                serve(c, &s);
            pthread_mutex_lock(&busy_lock);
            busy = 0;
            pthread_mutex_unlock(&busy_lock);
        }
    }
    linger_close(c->fd);
    free(c);
    return NULL;
}

static void spawn(struct client *c)
{
    pthread_t t;
    pthread_attr_t attr;
    start_greeting(c);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, connection, c) != 0) {
        end_greeting(c);
        close(c->fd);
        free(c);
    }
    pthread_attr_destroy(&attr);
}

static void describe(const struct sockaddr *sa, char *out, size_t cap)
{
    char host[NI_MAXHOST], port[NI_MAXSERV];
    socklen_t len = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                              : sizeof(struct sockaddr_in);
    if (getnameinfo(sa, len, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        snprintf(out, cap, "?");
    else
        snprintf(out, cap, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

static void accept_forever(int lfd)
{
    for (;;) {
        struct sockaddr_storage addr;
        socklen_t len = sizeof addr;
        int fd = accept(lfd, (struct sockaddr *)&addr, &len);
        if (fd < 0) {
            if (errno != EINTR && errno != ECONNABORTED)
                usleep(10000);     /* e.g. out of descriptors: do not spin */
            continue;
        }
        struct client *c = malloc(sizeof *c);
        if (!c) {
            close(fd);
            continue;
        }
        c->fd = fd;
        describe((struct sockaddr *)&addr, c->peer, sizeof c->peer);
        spawn(c);
    }
}

/* HOST:PORT, [V6]:PORT, :PORT or PORT; an empty host is 127.0.0.1. */
static int listen_on(const char *spec, char *bound, size_t cap)
{
    char host[256] = "127.0.0.1";
    const char *colon = strrchr(spec, ':');
    const char *port = colon ? colon + 1 : spec;
    if (colon && colon > spec) {
        size_t n = (size_t)(colon - spec);
        if (spec[0] == '[' && n >= 2 && spec[n - 1] == ']') {
            spec++;
            n -= 2;
        }
        if (n >= sizeof host)
            return fprintf(stderr, "dsp-agent: host name too long\n"), -1;
        memcpy(host, spec, n);
        host[n] = '\0';
    }
    char *end;
    long number = strtol(port, &end, 10);
    if (!*port || *end || number < 0 || number > 65535)
        return fprintf(stderr, "dsp-agent: bad address %s: the port must be 0..65535\n",
                       spec), -1;
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *res;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0)
        return fprintf(stderr, "dsp-agent: cannot resolve %s: %s\n", host,
                       gai_strerror(gai)), -1;
    int fd = socket(res->ai_family, SOCK_STREAM, 0), one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 64) != 0) {
        fprintf(stderr, "dsp-agent: cannot listen on %s:%s: %s\n", host, port,
                strerror(errno));
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    struct sockaddr_storage addr;
    socklen_t len = sizeof addr;
    getsockname(fd, (struct sockaddr *)&addr, &len);
    describe((struct sockaddr *)&addr, bound, cap);
    return fd;
}

static int is_loopback(const char *bound)
{
    return strncmp(bound, "127.", 4) == 0 || strncmp(bound, "[::1]", 5) == 0;
}

static void usage(FILE *to)
{
    fprintf(to, "usage: dsp-agent [--listen HOST:PORT] [--token T] [--idle-timeout S] "
            "[--frame-timeout S] [--hello-timeout S] [--max-frame BYTES] "
            "[--max-graph-bytes BYTES]\n"
            "Serves Hexscope's device-agent protocol (docs/protocol.md) on hexagon_nn.\n"
            "  --listen HOST:PORT   default 127.0.0.1:5599; port 0 picks a free port\n"
            "  --token T            refuse clients without T (default: $HEXSCOPE_AGENT_TOKEN)\n"
            "  --idle-timeout S     close a connection idle this long (default 900; 0: never)\n"
            "  --frame-timeout S    time a frame under way may go without a byte (default 10)\n"
            "  --hello-timeout S    time from connecting to a whole HELLO (default 5)\n"
            "  --max-frame BYTES    largest frame accepted (default %u, at most %u)\n"
            "  --max-graph-bytes B  largest graph, in bytes of its UPLOAD frames (default "
            "%llu)\n", DEFAULT_MAX_FRAME, HARD_MAX_FRAME, DEFAULT_MAX_GRAPH);
}

static int number_arg(const char *text, double lo, double hi, double *out)
{
    char *end;
    *out = strtod(text, &end);
    return *text && !*end && *out >= lo && *out <= hi;
}

int main(int argc, char **argv)
{
    const char *listen_spec = "127.0.0.1:5599", *token = getenv("HEXSCOPE_AGENT_TOKEN");
    uint64_t max_graph = DEFAULT_MAX_GRAPH;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double x;
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return usage(stdout), 0;
        if (!v)
            return usage(stderr), 2;
        if (!strcmp(a, "--listen"))
            listen_spec = v;
        else if (!strcmp(a, "--token"))
            token = v;
        else if (!strcmp(a, "--idle-timeout") && number_arg(v, 0, 2e6, &x))
            limits.idle_ms = x > 0 ? (int)(x * 1000) : -1;
        else if (!strcmp(a, "--frame-timeout") && number_arg(v, 0.001, 2e6, &x))
            limits.frame_ms = (int)(x * 1000);
        else if (!strcmp(a, "--hello-timeout") && number_arg(v, 0.001, 3600, &x))
            hello_ms = (int)(x * 1000);
        else if (!strcmp(a, "--max-frame") && number_arg(v, 4096, HARD_MAX_FRAME, &x))
            limits.max_frame = (uint32_t)x;
        else if (!strcmp(a, "--max-graph-bytes") && number_arg(v, 1, 1e18, &x))
            max_graph = (uint64_t)x;
        else
            return fprintf(stderr, "dsp-agent: bad option %s %s\n", a, v), usage(stderr), 2;
        if (!strcmp(a, "--token") && !*v)    /* an empty token would let anyone in */
            return fprintf(stderr, "dsp-agent: --token is empty: give a token, or leave "
                           "--token out to accept any client\n"), 2;
        i++;
    }
    if (token && !*token)                    /* HEXSCOPE_AGENT_TOKEN set but empty: unset */
        token = NULL;
    if (token && strlen(token) > MAX_TOKEN)
        return fprintf(stderr, "dsp-agent: the token is over %u bytes\n", MAX_TOKEN), 2;
    signal(SIGPIPE, SIG_IGN);
    int nn = hexagon_nn_config();
    if (nn != 0)
        return fprintf(stderr, "dsp-agent: hexagon_nn_config failed (%d): is the DSP "
                       "reachable (FastRPC, libhexagon_nn_skel.so on ADSP_LIBRARY_PATH)?\n",
                       nn), 2;
    char bound[160];
    int lfd = listen_on(listen_spec, bound, sizeof bound);
    if (lfd < 0)
        return 2;
    static char description[256];
    snprintf(description, sizeof description, "hexscope dsp-agent %s (%s)", DSP_AGENT_VERSION,
             DSP_AGENT_BACKEND);
    config = (struct agent_config){ (const unsigned char *)token,
                                    token ? (uint32_t)strlen(token) : 0, limits.max_frame,
                                    DSP_AGENT_COUNTER_KIND, description, max_graph };
    if (!is_loopback(bound) && !token)
        fprintf(stderr, "dsp-agent: warning: listening on %s without a token; anyone who can "
                "reach this port can run graphs here\n", bound);
    printf("dsp-agent listening on %s%s\n", bound, token ? " (token required)" : "");
    fflush(stdout);
    accept_forever(lfd);
    return 0;
}
