/* journal-worker: runs the journal's background jobs (the AI text checks) against the
 * module's database. Started by httpd (one process per JournalWorkerProcesses) or on its own,
 * e.g. by systemd, with the same settings file. See docs/worker.md. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <apr_general.h>
#include <apr_getopt.h>
#include <apr_strings.h>
#include <jansson.h>

#include "jr_crypt.h"
#include "jr_db.h"
#include "jr_util.h"
#include "jw.h"

static int signal_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    int saved = errno;
    jw_stop_requested = 1;
    if (write(signal_pipe[1], "s", 1) < 0) {
        /* the pipe is full: the loop wakes anyway */
    }
    errno = saved;
}

static int install_signals(void)
{
    struct sigaction sa;
    int i;
    if (pipe(signal_pipe) != 0) {
        return -1;
    }
    for (i = 0; i < 2; ++i) {
        fcntl(signal_pipe[i], F_SETFL, fcntl(signal_pipe[i], F_GETFL) | O_NONBLOCK);
        fcntl(signal_pipe[i], F_SETFD, FD_CLOEXEC);
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    return 0;
}

/* Waits out the supervisor's back-off delay before anything else, reading the settings
 * included: a refused configuration must not end the process at once, or its supervisor
 * would restart it in a loop. A signal ends the wait (the self-pipe keeps it from being
 * missed). */
static void wait_delay(long long seconds)
{
    struct pollfd pfd;
    apr_time_t end = apr_time_now() + apr_time_from_sec(seconds), now;
    pfd.fd = signal_pipe[0];
    pfd.events = POLLIN;
    while (!jw_stop_requested && (now = apr_time_now()) < end) {
        pfd.revents = 0;
        poll(&pfd, 1, (int)((end - now + 999) / 1000));
    }
}

static void usage(FILE *out)
{
    fputs("usage: journal-worker --config FILE [--instance N] [--delay SECONDS]\n"
          "\n"
          "  --config FILE      the settings file (see docs/worker.md)\n"
          "  --instance N       index of a supervised process (for the logs)\n"
          "  --delay SECONDS    wait this long before starting (the supervisor's back-off)\n"
          "\n"
          "Exit status: 0 after SIGTERM, 2 for a configuration error, 1 otherwise.\n",
          out);
}

typedef struct {
    const char *config;
    long long instance, delay;
} args_t;

/* 0, or an exit status. */
static int parse_args(apr_pool_t *p, int argc, const char *const *argv, args_t *a)
{
    static const apr_getopt_option_t opts[] = {
        {"config", 'c', 1, "settings file"}, {"instance", 'i', 1, "instance"},
        {"delay", 'd', 1, "delay"},          {"help", 'h', 0, "help"},
        {NULL, 0, 0, NULL},
    };
    apr_getopt_t *g;
    const char *arg;
    int opt;
    apr_status_t rv;
    memset(a, 0, sizeof(*a));
    apr_getopt_init(&g, p, argc, argv);
    while ((rv = apr_getopt_long(g, opts, &opt, &arg)) == APR_SUCCESS) {
        if (opt == 'h') {
            usage(stdout);
            return -1;
        }
        if ((opt == 'i' && jr_parse_int64(arg, 0, 1000, &a->instance) != 0) ||
            (opt == 'd' && jr_parse_int64(arg, 0, 3600, &a->delay) != 0)) {
            JR_LOG(JR06006, 0, "--%s: '%s' is not a valid number",
                   opt == 'i' ? "instance" : "delay", arg);
            return JW_EXIT_CONFIG;
        }
        if (opt == 'c') {
            a->config = arg;
        }
    }
    if (rv != APR_EOF || g->ind < argc || !a->config) {
        usage(stderr);
        return JW_EXIT_CONFIG;
    }
    return 0;
}

int main(int argc, const char *const *argv)
{
    apr_pool_t *p;
    jw_settings_t s;
    jw_options_t o;
    args_t a;
    const char *err;
    int rc;

    if (apr_app_initialize(&argc, &argv, NULL) != APR_SUCCESS ||
        apr_pool_create(&p, NULL) != APR_SUCCESS) {
        return 1;
    }
    atexit(apr_terminate);
    /* Standard error (httpd's error log when httpd runs us), warnings and errors until the
     * settings name log_level. */
    jr_log_set(NULL, NULL, JR_LOG_WARN);
    if ((rc = parse_args(p, argc, argv, &a)) != 0) {
        return rc < 0 ? 0 : rc;
    }
    if (install_signals() != 0) {
        JR_LOG(JR06008, errno, "cannot initialise the process");
        return 1;
    }
    wait_delay(a.delay);
    if (jw_stop_requested) {
        return 0;
    }
    if ((err = jw_settings_load(p, a.config, &s)) != NULL) {
        JR_LOG(JR06007, 0, "configuration error: %s", err);
        return JW_EXIT_CONFIG;
    }
    jr_log_set(NULL, NULL, s.log_level);
    if (jr_crypt_init() != 0 || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        JR_LOG(JR06008, errno, "cannot initialise the process");
        return 1;
    }
    jr_db_global_init();
    json_object_seed(0);
    o.instance = (int)a.instance;
    o.signal_fd = signal_pipe[0];
    rc = jw_stop_requested ? 0 : jw_run(p, &s, &o);
    curl_global_cleanup();
    apr_pool_destroy(p);
    return rc;
}
