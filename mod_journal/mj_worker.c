/* httpd's parent supervises the journal-worker processes (JournalWorker On): it starts them
 * once the configuration is read, as the server's User and Group, starts one again when it
 * ends (after a growing delay that the new process waits out itself, so the parent's loop
 * never sleeps), and stops them when httpd stops or restarts: pconf's cleanup sends SIGTERM,
 * waits a bounded time, then sends SIGKILL and reaps them. The model is mod_cgid's daemon: the
 * processes are "other children" of the MPM, which reports their death to us.
 *
 * The workers read their settings from a file this code writes into the runtime directory
 * (docs/worker.md), never from argv: DBDParams may hold a password. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <ap_mpm.h>
#include <apr_atomic.h>
#include <apr_shm.h>
#include <apr_strings.h>
#include <http_core.h>
#include <unixd.h>

#include "mj_private.h"

#define SETTINGS_NAME "journal-worker.conf"
#define RETAINED_KEY "mod_journal-workers"
#define BACKOFF_FIRST 1 /* seconds before the first restart ... */
#define BACKOFF_MAX 60  /* ... doubled up to this */
#define HEALTHY_RUN apr_time_from_sec(60) /* a run this long resets the back-off */
#define STOP_GRACE apr_time_from_sec(5)   /* SIGTERM, then this long before SIGKILL */
#define EXIT_CANNOT_RUN 127               /* the child could not become the worker */

/* Who the workers run as: resolved in the parent, because getpwnam and friends are not safe
 * between fork and exec. */
typedef struct {
    int switch_user; /* started as root with a User: drop to it */
    uid_t uid;
    gid_t gid;
    int ngroups;
    gid_t *groups;
} ids_t;

typedef struct slot {
    int index;          /* 1-based, passed as --instance */
    apr_proc_t proc;    /* proc.pid is 0 while no process runs */
    apr_pool_t *pool;   /* holds the other-child registration of the current process */
    apr_time_t started; /* fork time */
    int delay;          /* seconds the process was told to wait before it works */
    int backoff;        /* the delay of the next restart */
    int term_sent;
} slot_t;

typedef struct {
    server_rec *s;
    pid_t parent;
    const char *path, *settings;
    ids_t ids;
    int count;
    slot_t *slots;
} supervisor_t;

typedef struct {
    apr_shm_t *shm; /* the census: kept across restarts, inherited by every child */
} retained_t;

static jr_worker_census_t *census;

/* The census entry of a slot: who runs there, and from when it works (after its delay). */
static void census_set(const slot_t *w, pid_t pid, int delay)
{
    apr_time_t from = delay > 0 ? apr_time_now() + apr_time_from_sec(delay) : 0;
    /* Rounded up: a process is never counted before its delay is over. */
    apr_atomic_set32(&census->slot[w->index - 1].from,
                     (apr_uint32_t)((from + APR_USEC_PER_SEC - 1) / APR_USEC_PER_SEC));
    apr_atomic_set32(&census->slot[w->index - 1].pid, (apr_uint32_t)pid);
}

/* ---- identity ---------------------------------------------------------------------------- */

static void server_ids(apr_pool_t *p, ids_t *ids)
{
    const char *name = ap_unixd_config.user_name;
    struct passwd *pw;
    int n = 32;

    memset(ids, 0, sizeof(*ids));
    ids->uid = ap_unixd_config.user_id;
    ids->gid = ap_unixd_config.group_id;
    ids->switch_user = geteuid() == 0 && ids->uid != (uid_t)-1 && ids->gid != (gid_t)-1;
    if (!ids->switch_user) {
        return;
    }
    if (name && *name == '#') { /* User #1000 */
        name = (pw = getpwuid(ids->uid)) ? apr_pstrdup(p, pw->pw_name) : NULL;
    }
    ids->groups = apr_palloc(p, n * sizeof(gid_t));
    if (!name || getgrouplist(name, ids->gid, ids->groups, &n) < 0) {
        ids->groups = apr_palloc(p, (n > 1 ? n : 1) * sizeof(gid_t));
        if (!name || getgrouplist(name, ids->gid, ids->groups, &n) < 0) {
            n = 1; /* only the primary group: never keep root's groups */
            ids->groups[0] = ids->gid;
        }
    }
    ids->ngroups = n;
}

/* In a forked child: async-signal-safe calls only. Returns 0 or an errno value. */
static int become(const ids_t *ids)
{
    if (!ids->switch_user) {
        return 0;
    }
    if (setgroups((size_t)ids->ngroups, ids->groups) != 0 || setgid(ids->gid) != 0 ||
        setuid(ids->uid) != 0) {
        return errno ? errno : EPERM;
    }
    return 0;
}

/* Writes "JR...: <text><errno>\n" to stderr (httpd's error log) without stdio or malloc. */
static void child_say(const char *text, const char *path, int err)
{
    char num[16];
    int i = (int)sizeof(num);
    unsigned v = (unsigned)err;
    num[--i] = '\n';
    do {
        num[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v && i > 0);
    if (write(STDERR_FILENO, text, strlen(text)) < 0 ||
        write(STDERR_FILENO, path, strlen(path)) < 0 ||
        write(STDERR_FILENO, ": errno ", 8) < 0) {
        return;
    }
    if (write(STDERR_FILENO, num + i, sizeof(num) - (size_t)i) < 0) {
        return;
    }
}

/* ---- the key file ------------------------------------------------------------------------ */

/* Opens path as the server's User in a short-lived child: the only honest test of what the
 * worker will be able to do (permissions, ACLs, directories on the way). Returns 0 or an errno
 * value. The file is opened, never read. */
static int readable_as_user(apr_pool_t *p, const char *path)
{
    ids_t ids;
    pid_t pid;
    int status = 0, fd;

    server_ids(p, &ids);
    if (!ids.switch_user) {
        if ((fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC)) < 0) {
            return errno;
        }
        close(fd);
        return 0;
    }
    if ((pid = fork()) < 0) {
        return errno;
    }
    if (pid == 0) {
        int err = become(&ids);
        if (!err && (fd = open(path, O_RDONLY | O_NOCTTY)) < 0) {
            err = errno;
        }
        _exit(err & 0xff);
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : EIO;
}

static int is_executable(const char *path);

int mj_worker_check_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                           server_rec *s)
{
    const jr_config_t *c = mj_conf(s);
    const char *key = c->ai_key_file;
    /* httpd reads the Redis password as root; the workers it runs read it as the User. */
    const char *pw = c->redis && c->worker_supervised && is_executable(c->worker_path)
                         ? c->redis_password_file
                         : NULL;
    int err = key ? readable_as_user(ptemp, key) : 0;
    if (err) {
        MJ_LOG(JR00107, s, 0,
               "JournalAIKeyFile: '%s' cannot be read by the server's User "
               "(%s): make it readable by that user and by nobody else",
               key, strerror(err));
        return !OK;
    }
    if (pw && (err = readable_as_user(ptemp, pw)) != 0) {
        MJ_LOG(JR09052, s, 0,
               "JournalRedisPasswordFile: '%s' cannot be read by the server's User (%s), "
               "which journal-worker runs as (JournalWorker On): make it readable by that "
               "user and by nobody else",
               pw, strerror(err));
        return !OK;
    }
    return OK;
}

/* ---- the settings file ------------------------------------------------------------------- */

static const char *level_name(int level)
{
    return level <= APLOG_ERR ? "error" : level == APLOG_WARNING ? "warn"
                                      : level < APLOG_DEBUG      ? "info"
                                                                 : "debug";
}

/* "name = value\n", or "" when value is NULL (an optional setting left out). */
static const char *setting(apr_pool_t *p, const char *name, const char *value)
{
    return value ? apr_pstrcat(p, name, " = ", value, "\n", NULL) : "";
}

/* The runtime directory without a trailing slash. */
static const char *runtime_dir(apr_pool_t *p)
{
    char *dir = ap_runtime_dir_relative(p, "");
    size_t n = dir ? strlen(dir) : 0;
    while (n > 1 && dir[n - 1] == '/') {
        dir[--n] = '\0';
    }
    return dir;
}

/* The file's text, or NULL when a value would break its line format (a line break in
 * DBDParams or a path): the value is never quoted in a message. */
static const char *settings_text(apr_pool_t *p, server_rec *s)
{
    jr_config_t *c = mj_conf(s);
    const dbd_cfg_t *db = mj_dbd_settings(s);
    const char *values[] = {db ? db->name : "", db ? db->params : "", c->data_dir,
                            runtime_dir(p), c->ai_endpoint, c->ai_model, c->ai_key_file,
                            c->photo_ai_endpoint, c->redis,
                            c->redis ? c->redis_password_file : NULL};
    size_t i;
    for (i = 0; i < sizeof(values) / sizeof(values[0]); ++i) {
        if (values[i] && strpbrk(values[i], "\r\n")) {
            return NULL;
        }
    }
    return apr_pstrcat(
        p, "# Written by mod_journal at each start of httpd; edits are lost. See docs/worker.md.\n",
        setting(p, "db_driver", values[0]), setting(p, "db_params", values[1]),
        setting(p, "data_dir", values[2]), setting(p, "runtime_dir", values[3]),
        setting(p, "ai_endpoint", values[4]), setting(p, "ai_model", values[5]),
        setting(p, "ai_key_file", values[6]),
        apr_psprintf(p, "ai_timeout = %d\nai_concurrency = %d\nlog_level = %s\n",
                     (int)c->ai_timeout, (int)c->ai_concurrency,
                     level_name(ap_get_server_module_loglevel(s, APLOG_MODULE_INDEX))),
        setting(p, "photo_ai_endpoint", values[7]),
        apr_psprintf(p, "photo_ai_timeout_ms = %d\nphoto_upscale_timeout_ms = %d\n"
                        "photo_max_size = %" APR_INT64_T_FMT "\n",
                     c->photo_ai_timeout, c->photo_upscale_timeout, (apr_int64_t)c->upload_max),
        setting(p, "redis", values[8]), setting(p, "redis_password_file", values[9]), NULL);
}

/* Mode 0600, owned by the server's User, replaced in one rename. Returns 0 or an errno value
 * (EINVAL: a value with a line break). */
static int write_settings(apr_pool_t *p, server_rec *s, const char *path, const ids_t *ids)
{
    const char *text = settings_text(p, s);
    char *tmp = apr_pstrcat(p, path, ".XXXXXX", NULL);
    size_t len, done = 0;
    int fd, err = 0;

    if (!text) {
        return EINVAL;
    }
    len = strlen(text);
    if ((fd = mkstemp(tmp)) < 0) {
        return errno;
    }
    if (fchmod(fd, S_IRUSR | S_IWUSR) != 0 ||
        (ids->switch_user && fchown(fd, ids->uid, ids->gid) != 0)) {
        err = errno;
    }
    while (!err && done < len) {
        ssize_t n = write(fd, text + done, len - done);
        if (n < 0 && errno != EINTR) {
            err = errno;
        }
        done += n > 0 ? (size_t)n : 0;
    }
    if (close(fd) != 0 && !err) {
        err = errno;
    }
    if (!err && rename(tmp, path) != 0) {
        err = errno;
    }
    if (err) {
        unlink(tmp);
    }
    return err;
}

/* ---- starting and watching --------------------------------------------------------------- */

static void maintenance(int reason, void *data, int status);

/* A child that cannot become the worker waits out its delay before it exits, as the worker
 * would have: its restarts keep the back-off instead of coming once a second. SIGTERM (its
 * default action is restored) ends the wait. */
static void child_wait(int delay)
{
    struct timespec t;
    t.tv_sec = delay;
    t.tv_nsec = 0;
    while (delay > 0 && nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

/* The forked child: a clean slate (signals, descriptors, identity), then exec. Only
 * async-signal-safe calls: the parent may have threads. */
static void exec_worker(const supervisor_t *v, const char *const argv[], int delay)
{
    struct sigaction dfl;
    sigset_t none;
    int sig, fd, err;

    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (sig = 1; sig < NSIG; ++sig) {
        sigaction(sig, &dfl, NULL); /* ignored signals would stay ignored across exec */
    }
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if ((fd = open("/dev/null", O_RDONLY)) >= 0 && fd != STDIN_FILENO) {
        dup2(fd, STDIN_FILENO);
    }
    dup2(STDERR_FILENO, STDOUT_FILENO); /* stderr is httpd's error log */
    setpgid(0, 0); /* a terminal's Ctrl-C stops httpd, and httpd stops the workers */
    if (close_range(3, ~0U, 0) != 0) {  /* listening sockets, logs, the scoreboard ... */
        for (fd = 3; fd < 4096; ++fd) {
            close(fd);
        }
    }
    if ((err = become(&v->ids)) != 0) {
        child_say("JR00105: journal-worker: cannot switch to the server's User and Group for ",
                  v->path, err);
        child_wait(delay);
        _exit(EXIT_CANNOT_RUN);
    }
#ifdef PR_SET_PDEATHSIG
    /* After the identity change, which clears it: a parent killed with SIGKILL leaves none. */
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != v->parent) {
        _exit(0);
    }
#endif
    execv(v->path, (char *const *)argv);
    child_say("JR00106: journal-worker: cannot execute ", v->path, errno);
    child_wait(delay);
    _exit(EXIT_CANNOT_RUN);
}

static void spawn(supervisor_t *v, slot_t *w, int delay)
{
    char instance[16], wait[16];
    const char *argv[] = {v->path, "--config", v->settings, "--instance", instance,
                          delay > 0 ? "--delay" : NULL, wait, NULL};
    pid_t pid;

    apr_snprintf(instance, sizeof(instance), "%d", w->index);
    apr_snprintf(wait, sizeof(wait), "%d", delay);
    if ((pid = fork()) == 0) {
        exec_worker(v, argv, delay);
    }
    if (pid < 0) {
        MJ_LOG(JR00104, v->s, errno,
               "cannot start journal-worker %d: fork failed; it stays stopped "
               "until httpd restarts",
               w->index);
        return;
    }
    w->proc.pid = pid;
    w->started = apr_time_now();
    w->delay = delay;
    w->term_sent = 0;
    apr_pool_clear(w->pool); /* drops the previous registration's record */
    apr_proc_other_child_register(&w->proc, maintenance, w, NULL, w->pool);
    census_set(w, pid, delay);
    MJ_LOG(JR00108, v->s, 0, "journal-worker %d started (pid %ld, waits %d s)", w->index,
           (long)pid, delay);
}

static supervisor_t *current; /* this generation's supervisor, in the parent */

static int httpd_stopping(void)
{
    int state;
    return ap_mpm_query(AP_MPMQ_MPM_STATE, &state) != APR_SUCCESS || state == AP_MPMQ_STOPPING;
}

/* A process asked to stop must exit 0 (the worker's contract) or die of the SIGTERM itself
 * (before it could handle it) or of our SIGKILL (JR00103 said so). Anything else is worth an
 * error: its jobs in flight may not have been finished or given back. raw: waitpid's status. */
static void check_stop_status(const supervisor_t *v, const slot_t *w, pid_t pid, int raw)
{
    char how[48];
    if (WIFEXITED(raw) && WEXITSTATUS(raw) != 0) {
        apr_snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(raw));
    } else if (WIFSIGNALED(raw) && WTERMSIG(raw) != SIGTERM && WTERMSIG(raw) != SIGKILL) {
        apr_snprintf(how, sizeof(how), "was ended by signal %d", WTERMSIG(raw));
    } else {
        return;
    }
    MJ_LOG(JR00120, v->s, 0, "journal-worker %d (pid %ld) %s when asked to stop", w->index,
           (long)pid, how);
}

/* A process ended (the MPM reaped it): start it again after the back-off. */
static void ended(slot_t *w, int status)
{
    supervisor_t *v = current;
    apr_time_t ran = apr_time_now() - w->started - apr_time_from_sec(w->delay);
    pid_t pid = w->proc.pid;
    int delay;

    apr_proc_other_child_unregister(w);
    w->proc.pid = 0;
    census_set(w, 0, 0);
    if (!v || getpid() != v->parent) {
        return; /* pconf's cleanup or the next generation takes over */
    }
    if (httpd_stopping()) {
        /* Reaped while httpd reclaims its children, which passes waitpid's status. */
        check_stop_status(v, w, pid, status);
        return;
    }
    if (ran >= HEALTHY_RUN) {
        w->backoff = BACKOFF_FIRST;
    }
    delay = w->backoff;
    w->backoff = w->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : w->backoff * 2;
    /* The MPM passes the exit status, or the signal number when one ended it. */
    MJ_LOG(JR00101, v->s, 0,
           "journal-worker %d (pid %ld) ended with status %d%s; starting it "
           "again in %d s",
           w->index, (long)pid, status,
           status == EXIT_CANNOT_RUN ? " (it could not be run: see JR00105 or JR00106)"
           : status == 2             ? " (a configuration error: see its messages above)"
                                     : "",
           delay);
    apr_atomic_inc32(&census->restarts);
    spawn(v, w, delay);
}

static void maintenance(int reason, void *data, int status)
{
    slot_t *w = data;
    switch (reason) {
    case APR_OC_REASON_DEATH:
    case APR_OC_REASON_LOST:
        if (w->proc.pid > 0) {
            ended(w, status);
        }
        break;
    case APR_OC_REASON_RESTART:
        /* httpd stops or restarts, not gracefully: let the workers stop meanwhile too. */
        if (w->proc.pid > 0 && !w->term_sent) {
            kill(w->proc.pid, SIGTERM);
            w->term_sent = 1;
        }
        break;
    default: /* UNREGISTER: the registration's pool goes; stop_all does the rest */
        break;
    }
}

/* 1 once the process of w is gone (reaped here, or by someone else). */
static int reaped(const supervisor_t *v, slot_t *w)
{
    int status = 0;
    pid_t r;
    if (w->proc.pid <= 0) {
        return 1;
    }
    r = waitpid(w->proc.pid, &status, WNOHANG);
    if (r == w->proc.pid || (r < 0 && errno == ECHILD)) {
        if (r == w->proc.pid) {
            check_stop_status(v, w, r, status);
        }
        w->proc.pid = 0;
        census_set(w, 0, 0);
        return 1;
    }
    return 0;
}

/* Waits until every process is gone or the deadline passes; returns how many remain. */
static int wait_all(supervisor_t *v, apr_time_t deadline)
{
    apr_interval_time_t pause = 2000;
    int i, alive;
    for (;;) {
        for (alive = 0, i = 0; i < v->count; ++i) {
            alive += !reaped(v, &v->slots[i]);
        }
        if (!alive || apr_time_now() >= deadline) {
            return alive;
        }
        apr_sleep(pause);
        pause = pause * 2 > 100000 ? 100000 : pause * 2;
    }
}

/* pconf's cleanup: when httpd stops or restarts (graceful or not). */
static apr_status_t stop_all(void *data)
{
    supervisor_t *v = data;
    int i;
    if (getpid() != v->parent) {
        return APR_SUCCESS; /* a child of httpd clearing its copy of the pool */
    }
    current = NULL; /* a death from here on is no reason to restart */
    for (i = 0; i < v->count; ++i) {
        /* Once: a second SIGTERM could end a process that is exiting as asked, after it
         * gave its handler up, and hide how it exited. */
        if (v->slots[i].proc.pid > 0 && !v->slots[i].term_sent) {
            kill(v->slots[i].proc.pid, SIGTERM);
            v->slots[i].term_sent = 1;
        }
    }
    if (wait_all(v, apr_time_now() + STOP_GRACE) > 0) {
        for (i = 0; i < v->count; ++i) {
            if (v->slots[i].proc.pid > 0) {
                MJ_LOG(JR00103, v->s, 0,
                       "journal-worker %d (pid %ld) did not stop within %d s "
                       "of SIGTERM: killing it",
                       v->slots[i].index, (long)v->slots[i].proc.pid,
                       (int)apr_time_sec(STOP_GRACE));
                kill(v->slots[i].proc.pid, SIGKILL);
            }
        }
        wait_all(v, apr_time_now() + apr_time_from_sec(5));
    }
    unlink(v->settings); /* it holds DBDParams: nothing reads it once the workers are gone */
    return APR_SUCCESS;
}

/* ---- startup ----------------------------------------------------------------------------- */

static int attach_census(server_rec *s)
{
    retained_t *r = ap_retained_data_get(RETAINED_KEY);
    server_rec *sp;
    apr_status_t rv;
    if (!r) {
        r = ap_retained_data_create(RETAINED_KEY, sizeof(*r));
    }
    if (r->shm && apr_shm_size_get(r->shm) < sizeof(jr_worker_census_t)) {
        /* A graceful restart into a newer module with a larger census. The old generation's
         * children keep their own mapping of the old one. */
        apr_shm_destroy(r->shm);
        r->shm = NULL;
    }
    if (!r->shm) {
        rv = apr_shm_create(&r->shm, sizeof(jr_worker_census_t), NULL, s->process->pool);
        if (rv != APR_SUCCESS) {
            MJ_LOG(JR00109, s, rv,
                   "cannot create the shared memory of the worker census");
            return !OK;
        }
    }
    census = apr_shm_baseaddr_get(r->shm);
    memset((void *)census, 0, sizeof(*census)); /* the previous generation's are gone */
    for (sp = s; sp; sp = sp->next) {
        mj_conf(sp)->workers = census;
    }
    return OK;
}

static int is_executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

static supervisor_t *make_supervisor(apr_pool_t *pconf, server_rec *s, const char *settings)
{
    jr_config_t *c = mj_conf(s);
    supervisor_t *v = apr_pcalloc(pconf, sizeof(*v));
    int i;
    v->s = s;
    v->parent = getpid();
    v->path = c->worker_path;
    v->settings = settings;
    server_ids(pconf, &v->ids);
    v->count = (int)c->worker_processes;
    v->slots = apr_pcalloc(pconf, v->count * sizeof(slot_t));
    for (i = 0; i < v->count; ++i) {
        v->slots[i].index = i + 1;
        v->slots[i].backoff = BACKOFF_FIRST;
        apr_pool_create(&v->slots[i].pool, pconf);
    }
    return v;
}

int mj_worker_post_config(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s)
{
    jr_config_t *c = mj_conf(s);
    const char *settings = ap_runtime_dir_relative(pconf, SETTINGS_NAME);
    supervisor_t *v;
    int i, err;

    current = NULL;
    if (attach_census(s) != OK) {
        return !OK;
    }
    if (ap_state_query(AP_SQ_RUN_MODE) != AP_SQ_RM_NORMAL) {
        return OK; /* apache2 -t and the configuration dumps start nothing */
    }
    if (!c->worker_supervised) {
        if (settings) {
            unlink(settings);
        } /* left by a run with JournalWorker On: it holds DBDParams */
        return OK;
    }
    if (!is_executable(c->worker_path)) {
        /* Not fatal: without AI configured the journal works without a worker. */
        MJ_LOG_AT(JR00100,
                  c->ai_endpoint || strcmp(c->worker_path, jr_config_defaults.worker_path)
                      ? JR_LOG_WARN
                      : JR_LOG_INFO,
                  s, 0,
                  "JournalWorkerPath '%s' is not an executable file: no worker "
                  "runs, so AI checks stay queued. Install journal-worker, set "
                  "JournalWorkerPath, or set JournalWorker Off",
                  c->worker_path);
        return OK;
    }
    apr_atomic_set32(&census->binary, 1);
    v = make_supervisor(pconf, s, settings);
    if ((err = settings ? write_settings(ptemp, s, settings, &v->ids) : ENOENT) != 0) {
        MJ_LOG(JR00102, s, err == EINVAL ? 0 : err,
               "cannot write the worker settings file %s%s: no worker runs",
               settings ? settings : SETTINGS_NAME, err == EINVAL ? " (DBDParams or a path holds a line break)" : "");
        return OK;
    }
    apr_pool_cleanup_register(pconf, v, stop_all, apr_pool_cleanup_null);
    current = v;
    for (i = 0; i < v->count; ++i) {
        spawn(v, &v->slots[i], 0);
    }
    return OK;
}
