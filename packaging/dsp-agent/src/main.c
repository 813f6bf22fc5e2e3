/* dsp-agent: serves Hexscope's device-agent protocol (docs/protocol.md) on hexagon_nn's host
 * API. One client at a time; a client that connects meanwhile gets BUSY from the accepting
 * thread at once, even while the DSP is running a graph for the served client. */
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

static struct agent_config config;
static struct read_limits limits = { DEFAULT_MAX_FRAME, 900 * 1000, 10 * 1000 };
static pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;
static int busy;
static char serving[128];

struct client {
    int fd;
    char peer[128];
};

static void set_send_timeout(int fd, int seconds)
{
    struct timeval tv = { .tv_sec = seconds };
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static void *refuse(void *arg)
{
    struct client *c = arg;
    char text[256];
    pthread_mutex_lock(&busy_lock);
    snprintf(text, sizeof text, "agent busy: serving %s; one client at a time", serving);
    pthread_mutex_unlock(&busy_lock);
    fprintf(stderr, "dsp-agent: busy: refused %s\n", c->peer);
    set_send_timeout(c->fd, 2);
    send_frame(c->fd, MSG_BUSY, 0, NULL, 0, text, (uint32_t)strlen(text));
    linger_close(c->fd);
    free(c);
    return NULL;
}

static void *serve(void *arg)
{
    struct client *c = arg;
    struct session s = { .fd = c->fd, .cfg = &config };
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    set_send_timeout(c->fd, 60);
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
        int rc = session_handle(&s, &f);
        frame_free(&f);
        if (rc < 0)
            break;
    }
    session_teardown(&s);
    linger_close(c->fd);
    fprintf(stderr, "dsp-agent: client %s gone\n", c->peer);
    pthread_mutex_lock(&busy_lock);
    busy = 0;
    pthread_mutex_unlock(&busy_lock);
    free(c);
    return NULL;
}

static void spawn(void *(*fn)(void *), struct client *c)
{
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, fn, c) != 0) {
        close(c->fd);
        free(c);
        if (fn == serve) {
            pthread_mutex_lock(&busy_lock);
            busy = 0;
            pthread_mutex_unlock(&busy_lock);
        }
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
        pthread_mutex_lock(&busy_lock);
        int refused = busy;
        if (!busy) {
            busy = 1;
            snprintf(serving, sizeof serving, "%s", c->peer);
        }
        pthread_mutex_unlock(&busy_lock);
        spawn(refused ? refuse : serve, c);
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
    if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 8) != 0) {
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
            "[--frame-timeout S] [--max-frame BYTES]\n"
            "Serves Hexscope's device-agent protocol (docs/protocol.md) on hexagon_nn.\n"
            "  --listen HOST:PORT   default 127.0.0.1:5599; port 0 picks a free port\n"
            "  --token T            refuse clients without T (default: $HEXSCOPE_AGENT_TOKEN)\n"
            "  --idle-timeout S     close a connection idle this long (default 900; 0: never)\n"
            "  --frame-timeout S    time to finish a frame once begun (default 10)\n"
            "  --max-frame BYTES    largest frame accepted (default %u, at most %u)\n",
            DEFAULT_MAX_FRAME, HARD_MAX_FRAME);
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
        else if (!strcmp(a, "--max-frame") && number_arg(v, 4096, HARD_MAX_FRAME, &x))
            limits.max_frame = (uint32_t)x;
        else
            return fprintf(stderr, "dsp-agent: bad option %s %s\n", a, v), usage(stderr), 2;
        i++;
    }
    if (token && !*token)
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
                                    DSP_AGENT_COUNTER_KIND, description };
    if (!is_loopback(bound) && !token)
        fprintf(stderr, "dsp-agent: warning: listening on %s without a token; anyone who can "
                "reach this port can run graphs here\n", bound);
    printf("dsp-agent listening on %s%s\n", bound, token ? " (token required)" : "");
    fflush(stdout);
    accept_forever(lfd);
    return 0;
}
