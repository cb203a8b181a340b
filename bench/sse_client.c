/* A load client for the event streams (make bench-sse, docs/events.md "Capacity").
 *
 * One thread, epoll, non-blocking sockets: opens N server-sent event streams, parses their
 * `id:` / `event:` / `data:` fields and notes when each message arrived on each stream
 * (CLOCK_MONOTONIC, the clock of Python's time.monotonic(), so the driver can set the
 * arrivals against the times of its writes). A Python client spends more time in its own
 * loop than the server spends delivering once it holds a few hundred streams on a 2-core
 * machine; this one reads 2,000 streams' copies of an event in a few milliseconds.
 *
 *   sse_client --port P --token T [--streams N] [--host 127.0.0.1]
 *              [--path /api/notifications/stream] [--parallel 64] [--retry-ms 200]
 *              [--open-timeout 120]
 *
 * It prints one JSON line when the streams are open ({"ready": n, "refused": r, ...}), keeps
 * reading until its standard input ends (or SIGTERM/SIGINT), or, once a line with an event id
 * M has come on its standard input, until every open stream has received an id >= M (whether
 * the input ends or not); then it
 * prints one JSON document:
 * per event id its type, the entity_id of its data when there is one, how many streams got
 * it, the spread of the arrivals (first, p50, p99, last) and every arrival time. A stream
 * answered 503 (its httpd child holds its limit of streams) is opened again after
 * --retry-ms, as a page does after Retry-After; any other answer is counted and not retried.
 * Only libc. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HEAD_MAX 8192
#define LINE_MAX_KEPT 8192 /* longer data lines are cut: entity_id comes early */
#define TYPE_MAX 48

enum { IDLE, CONNECTING, HEAD, BODY, WAITING, DONE };
enum { CH_SIZE, CH_EXT, CH_DATA, CH_DATA_END, CH_TRAILER };

typedef struct {
    int fd, state, chunked, ch_state;
    long ch_left;
    double retry_at;
    char head[HEAD_MAX];
    size_t head_len;
    char line[LINE_MAX_KEPT];
    size_t line_len;
    /* the message being read */
    long long id, entity;
    int has_id, has_data;
    char type[TYPE_MAX];
    long long last_id; /* the last id dispatched on this stream */
} conn_t;

typedef struct {
    long long id, entity;
    char type[TYPE_MAX];
    double *t;
    size_t n, cap;
} event_t;

static struct {
    const char *host, *path, *token;
    int port, streams, parallel, retry_ms, open_timeout;
} opt = {"127.0.0.1", "/api/notifications/stream", NULL, 0, 2000, 64, 200, 120};

static struct {
    conn_t *conns;
    event_t *events;
    size_t nevents, capevents;
    int ep, open, chunked, inflight, refused, other_status, failed_connect, closed_by_server;
    long long heartbeats, duplicates, out_of_order, bytes;
    long long until_id; /* 0: until standard input ends */
    int reached;        /* open streams that have received until_id */
    char request[1024];
    size_t request_len;
} S;

static volatile sig_atomic_t stop_requested;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "sse_client: %s: %s\n", what, strerror(errno));
    exit(2);
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) {
        return p;
    }
    *cap = *cap ? *cap * 2 : 64;
    if (*cap < need) {
        *cap = need;
    }
    if (!(p = realloc(p, *cap * size))) {
        die("realloc");
    }
    return p;
}

/* ---- arrivals ------------------------------------------------------------------------- */

static event_t *event_of(long long id)
{
    size_t i;
    /* Few events, and a new arrival is nearly always one of the newest. */
    for (i = S.nevents; i-- > 0;) {
        if (S.events[i].id == id) {
            return &S.events[i];
        }
    }
    S.events = grow(S.events, &S.capevents, S.nevents + 1, sizeof(event_t));
    memset(&S.events[S.nevents], 0, sizeof(event_t));
    S.events[S.nevents].id = id;
    return &S.events[S.nevents++];
}

static void dispatch(conn_t *c, double t)
{
    event_t *e;
    if (c->has_id && c->has_data) {
        if (c->id == c->last_id) {
            ++S.duplicates;
        } else {
            if (c->id < c->last_id) {
                ++S.out_of_order;
            }
            if (S.until_id && c->last_id < S.until_id && c->id >= S.until_id) {
                ++S.reached;
            }
            c->last_id = c->id;
            e = event_of(c->id);
            if (!e->n) {
                e->entity = c->entity;
                memcpy(e->type, c->type, sizeof(e->type));
            }
            e->t = grow(e->t, &e->cap, e->n + 1, sizeof(double));
            e->t[e->n++] = t;
        }
    }
    c->has_id = c->has_data = 0;
    c->entity = -1;
    c->type[0] = '\0';
}

static void sse_line(conn_t *c, char *line, size_t len, double t)
{
    char *v;
    if (len && line[len - 1] == '\r') {
        line[--len] = '\0';
    }
    if (!len) {
        dispatch(c, t);
        return;
    }
    if (line[0] == ':') {
        ++S.heartbeats;
        return;
    }
    v = strchr(line, ':');
    v = v ? v + 1 + (v[1] == ' ') : line + len;
    if (!strncmp(line, "id:", 3)) {
        c->id = strtoll(v, NULL, 10);
        c->has_id = 1;
    } else if (!strncmp(line, "event:", 6)) {
        snprintf(c->type, sizeof(c->type), "%s", v);
    } else if (!strncmp(line, "data:", 5)) {
        const char *k = strstr(v, "\"entity_id\":");
        c->has_data = 1;
        if (k) {
            c->entity = strtoll(k + 12, NULL, 10);
        }
    }
}

/* Event stream bytes (after any chunked framing). */
static void sse_bytes(conn_t *c, const char *p, size_t n, double t)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        if (p[i] == '\n') {
            c->line[c->line_len] = '\0';
            sse_line(c, c->line, c->line_len, t);
            c->line_len = 0;
        } else if (c->line_len < LINE_MAX_KEPT - 1) {
            c->line[c->line_len++] = p[i];
        }
    }
}

/* HTTP/1.1 chunked framing around the stream: hands the payload to sse_bytes. */
static int body_bytes(conn_t *c, const char *p, size_t n, double t)
{
    size_t i = 0;
    if (!c->chunked) {
        sse_bytes(c, p, n, t);
        return 1;
    }
    while (i < n) {
        char ch = p[i];
        switch (c->ch_state) {
        case CH_SIZE:
            if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F')) {
                c->ch_left = c->ch_left * 16 +
                             (ch <= '9' ? ch - '0' : (ch | 0x20) - 'a' + 10);
            } else if (ch == '\n') {
                c->ch_state = c->ch_left ? CH_DATA : CH_TRAILER;
            } else {
                c->ch_state = CH_EXT;
            }
            ++i;
            break;
        case CH_EXT:
            if (ch == '\n') {
                c->ch_state = c->ch_left ? CH_DATA : CH_TRAILER;
            }
            ++i;
            break;
        case CH_DATA: {
            size_t take = n - i < (size_t)c->ch_left ? n - i : (size_t)c->ch_left;
            sse_bytes(c, p + i, take, t);
            i += take;
            if (!(c->ch_left -= (long)take)) {
                c->ch_state = CH_DATA_END;
            }
            break;
        }
        case CH_DATA_END:
            if (ch == '\n') {
                c->ch_state = CH_SIZE;
            }
            ++i;
            break;
        default:
            return 0; /* the last chunk: the stream has ended */
        }
    }
    return 1;
}

/* ---- connections ---------------------------------------------------------------------- */

static void conn_close(conn_t *c, int state)
{
    if (c->fd >= 0) {
        close(c->fd); /* also leaves the epoll set */
    }
    if (c->state == CONNECTING || c->state == HEAD) {
        --S.inflight;
    }
    c->fd = -1;
    c->state = state;
}

static void conn_start(conn_t *c, int idx)
{
    struct sockaddr_in a;
    struct epoll_event ev;
    int one = 1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)opt.port);
    inet_pton(AF_INET, opt.host, &a.sin_addr);
    if ((c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0) {
        die("socket");
    }
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->state = CONNECTING;
    c->head_len = c->line_len = 0;
    c->chunked = 0;
    c->ch_state = CH_SIZE;
    c->ch_left = 0;
    c->has_id = c->has_data = 0;
    c->entity = -1;
    ++S.inflight;
    if (connect(c->fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != EINPROGRESS) {
        ++S.failed_connect;
        conn_close(c, WAITING);
        c->retry_at = now_s() + opt.retry_ms / 1000.0;
        return;
    }
    ev.events = EPOLLOUT | EPOLLIN | EPOLLRDHUP;
    ev.data.u32 = (unsigned)idx;
    if (epoll_ctl(S.ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
        die("epoll_ctl");
    }
}

/* The answer's head: 200 starts the stream, 503 retries later, anything else is counted. */
static void on_head(conn_t *c, double t)
{
    char *end = memmem(c->head, c->head_len, "\r\n\r\n", 4);
    size_t rest;
    int status = 0;
    if (!end) {
        if (c->head_len == HEAD_MAX) {
            ++S.other_status;
            conn_close(c, DONE);
        }
        return;
    }
    *end = '\0';
    sscanf(c->head, "HTTP/1.%*d %d", &status);
    if (status != 200) {
        if (status == 503) {
            ++S.refused;
            conn_close(c, WAITING);
            c->retry_at = t + opt.retry_ms / 1000.0;
        } else {
            fprintf(stderr, "sse_client: answer %d\n", status);
            ++S.other_status;
            conn_close(c, DONE);
        }
        return;
    }
    c->chunked = strcasestr(c->head, "\r\ntransfer-encoding: chunked") != NULL;
    S.chunked += c->chunked;
    c->state = BODY;
    --S.inflight;
    ++S.open;
    rest = c->head_len - (size_t)(end + 4 - c->head);
    body_bytes(c, end + 4, rest, t);
}

static void on_readable(conn_t *c)
{
    char buf[65536];
    ssize_t n;
    double t;
    for (;;) {
        if (c->state == HEAD) {
            n = read(c->fd, c->head + c->head_len, HEAD_MAX - c->head_len);
        } else {
            n = read(c->fd, buf, sizeof(buf));
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        t = now_s();
        if (n <= 0) {
            if (c->state == BODY) {
                ++S.closed_by_server;
                --S.open;
                S.reached -= S.until_id && c->last_id >= S.until_id;
            } else {
                ++S.other_status;
            }
            conn_close(c, DONE);
            return;
        }
        S.bytes += n;
        if (c->state == HEAD) {
            c->head_len += (size_t)n;
            on_head(c, t);
            if (c->state != BODY) {
                return;
            }
        } else if (!body_bytes(c, buf, (size_t)n, t)) {
            ++S.closed_by_server;
            --S.open;
            S.reached -= S.until_id && c->last_id >= S.until_id;
            conn_close(c, DONE);
            return;
        }
    }
}

static void on_writable(conn_t *c, int idx)
{
    struct epoll_event ev;
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err || write(c->fd, S.request, S.request_len) != (ssize_t)S.request_len) {
        ++S.failed_connect;
        conn_close(c, WAITING);
        c->retry_at = now_s() + opt.retry_ms / 1000.0;
        return;
    }
    c->state = HEAD;
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u32 = (unsigned)idx;
    epoll_ctl(S.ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Starts connections up to --parallel at a time (a burst of thousands overflows httpd's
 * accept queue and costs SYN retransmissions of a second or more). */
static void start_more(double t)
{
    int i;
    for (i = 0; i < opt.streams && S.inflight < opt.parallel; ++i) {
        conn_t *c = &S.conns[i];
        if (c->state == IDLE || (c->state == WAITING && t >= c->retry_at)) {
            conn_start(c, i);
        }
    }
}

/* ---- output --------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double q)
{
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

static void report(void)
{
    size_t i, j;
    printf("{\"streams\":%d,\"open\":%d,\"chunked\":%d,\"refused\":%d,\"other_status\":%d,"
           "\"failed_connect\":%d,\"closed_by_server\":%d,\"heartbeats\":%lld,"
           "\"duplicates\":%lld,\"out_of_order\":%lld,\"bytes\":%lld,\"events\":[",
           opt.streams, S.open, S.chunked, S.refused, S.other_status, S.failed_connect,
           S.closed_by_server, S.heartbeats, S.duplicates, S.out_of_order, S.bytes);
    for (i = 0; i < S.nevents; ++i) {
        event_t *e = &S.events[i];
        qsort(e->t, e->n, sizeof(double), cmp_double);
        printf("%s\n{\"id\":%lld,\"event\":\"%s\",\"entity_id\":%lld,\"n\":%zu,"
               "\"first\":%.6f,\"p50\":%.6f,\"p99\":%.6f,\"last\":%.6f,\"t\":[",
               i ? "," : "", e->id, e->type, e->entity, e->n, e->t[0],
               pct(e->t, e->n, 0.5), pct(e->t, e->n, 0.99), e->t[e->n - 1]);
        for (j = 0; j < e->n; ++j) {
            printf("%s%.6f", j ? "," : "", e->t[j]);
        }
        printf("]}");
    }
    printf("]}\n");
    fflush(stdout);
}

/* ---- main ----------------------------------------------------------------------------- */

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void usage(void)
{
    fprintf(stderr, "usage: sse_client --port P --token T [--streams N] [--host H] [--path P]"
                    " [--parallel K] [--retry-ms MS] [--open-timeout S]\n");
    exit(2);
}

static void parse_args(int argc, char **argv)
{
    int i;
    for (i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--port")) {
            opt.port = atoi(v);
        } else if (!strcmp(k, "--token")) {
            opt.token = v;
        } else if (!strcmp(k, "--streams")) {
            opt.streams = atoi(v);
        } else if (!strcmp(k, "--host")) {
            opt.host = v;
        } else if (!strcmp(k, "--path")) {
            opt.path = v;
        } else if (!strcmp(k, "--parallel")) {
            opt.parallel = atoi(v);
        } else if (!strcmp(k, "--retry-ms")) {
            opt.retry_ms = atoi(v);
        } else if (!strcmp(k, "--open-timeout")) {
            opt.open_timeout = atoi(v);
        } else {
            usage();
        }
    }
    if (i != argc || opt.port <= 0 || !opt.token || opt.streams <= 0 || opt.parallel <= 0) {
        usage();
    }
}

static void setup(void)
{
    struct rlimit rl;
    struct sigaction sa;
    struct epoll_event ev;
    int n;

    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if ((rlim_t)opt.streams + 16 > rl.rlim_cur) {
        fprintf(stderr, "sse_client: %d streams need more descriptors than %llu\n",
                opt.streams, (unsigned long long)rl.rlim_cur);
        exit(2);
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal; /* no SA_RESTART: epoll_wait returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    n = snprintf(S.request, sizeof(S.request),
                 "GET %s HTTP/1.1\r\nHost: %s:%d\r\nAccept: text/event-stream\r\n"
                 "X-Auth-Token: %s\r\n\r\n",
                 opt.path, opt.host, opt.port, opt.token);
    if (n <= 0 || (size_t)n >= sizeof(S.request)) {
        usage();
    }
    S.request_len = (size_t)n;
    if (!(S.conns = calloc((size_t)opt.streams, sizeof(conn_t)))) {
        die("calloc");
    }
    for (n = 0; n < opt.streams; ++n) {
        S.conns[n].fd = -1;
        S.conns[n].last_id = -1;
    }
    if ((S.ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
        die("epoll_create1");
    }
    ev.events = EPOLLIN;
    ev.data.u32 = (unsigned)opt.streams; /* standard input */
    if (epoll_ctl(S.ep, EPOLL_CTL_ADD, 0, &ev) < 0) {
        die("epoll_ctl(stdin)");
    }
}

/* The driver ends the run by closing our standard input, or names the last event id to
 * wait for. 1 when the input has ended. */
static int read_stdin(void)
{
    char b[64];
    ssize_t n = read(0, b, sizeof(b) - 1);
    int i;
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        return 1;
    }
    if (n > 0) {
        b[n] = '\0';
        if ((S.until_id = strtoll(b, NULL, 10)) > 0) {
            for (i = 0, S.reached = 0; i < opt.streams; ++i) {
                S.reached += S.conns[i].state == BODY && S.conns[i].last_id >= S.until_id;
            }
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct epoll_event evs[512];
    double started, t;
    int ready_said = 0, ended = 0, i, n;

    parse_args(argc, argv);
    setup();
    started = now_s();
    while (!ended && !stop_requested && !(S.until_id > 0 && S.reached >= S.open)) {
        t = now_s();
        if (!ready_said) {
            start_more(t);
            if (S.open + S.other_status == opt.streams || t - started > opt.open_timeout) {
                printf("{\"ready\":%d,\"refused\":%d,\"other_status\":%d,\"seconds\":%.3f}\n",
                       S.open, S.refused, S.other_status, t - started);
                fflush(stdout);
                ready_said = 1;
            }
        }
        n = epoll_wait(S.ep, evs, 512, ready_said ? 200 : 20);
        if (n < 0 && errno != EINTR) {
            die("epoll_wait");
        }
        for (i = 0; i < n; ++i) {
            unsigned idx = evs[i].data.u32;
            conn_t *c;
            if (idx == (unsigned)opt.streams) {
                /* After an id to wait for, the end of the input no longer ends the run. */
                if (read_stdin()) {
                    epoll_ctl(S.ep, EPOLL_CTL_DEL, 0, NULL);
                    ended = !S.until_id;
                }
                continue;
            }
            c = &S.conns[idx];
            if (c->state == CONNECTING) {
                on_writable(c, (int)idx);
            } else if (c->state == HEAD || c->state == BODY) {
                on_readable(c);
            }
        }
    }
    report();
    for (i = 0; i < opt.streams; ++i) {
        if (S.conns[i].fd >= 0) {
            close(S.conns[i].fd);
        }
    }
    return 0;
}
