/* The worker's side of the event wake-ups (docs/events.md, "Redis"). The worker writes events
 * (AI status changes, photo jobs) outside httpd, so no child's shared-memory counter moves for
 * them: after the loop commits such rows, one PUBLISH on the channel every httpd child
 * subscribes to makes their notifiers read the outbox at once instead of at their next read
 * once a second.
 *
 * Best effort, never in the way of a job: the outbox is the truth and the publish comes after
 * the commit. The worker is one thread, so a Redis that is down may cost it one connection
 * attempt (at most CONNECT_TIMEOUT) per back-off period, never more; while it is down the
 * wake-ups are simply skipped. */
#include <string.h>

#include <apr_strings.h>
#include <hiredis/hiredis.h>

#include "jr_events.h"
#include "jw.h"

#define CONNECT_TIMEOUT_MS 200 /* also the limit of one command */
#define BACKOFF_FIRST apr_time_from_sec(1)
#define BACKOFF_MAX apr_time_from_sec(30)

struct jw_redis {
    const char *host, *sock, *password;
    int port;
    redisContext *c;
    apr_time_t retry_at; /* no attempt before this while disconnected */
    apr_time_t backoff;  /* the next delay */
    int down;            /* the outage has been logged */
    char why[160];       /* what went wrong, for the log line */
};

static apr_status_t redis_cleanup(void *data)
{
    jw_redis_t *r = data;
    if (r->c) {
        redisFree(r->c);
        r->c = NULL;
    }
    return APR_SUCCESS;
}

jw_redis_t *jw_redis_open(apr_pool_t *p, const jw_settings_t *s)
{
    jw_redis_t *r;
    if (!s->redis) {
        return NULL;
    }
    r = apr_pcalloc(p, sizeof(*r));
    jr_redis_address(p, s->redis, &r->host, &r->port, &r->sock); /* checked when read */
    r->password = s->redis_password;
    r->backoff = BACKOFF_FIRST;
    apr_pool_cleanup_register(p, r, redis_cleanup, apr_pool_cleanup_null);
    return r;
}

/* An error reply as the reason; never a password (Redis does not echo it). */
static int failed_reply(jw_redis_t *r, redisReply *reply, const char *what)
{
    if (reply && reply->type != REDIS_REPLY_ERROR) {
        return 0;
    }
    apr_snprintf(r->why, sizeof(r->why), "%s: %s", what,
                 reply ? reply->str : (r->c && r->c->errstr[0] ? r->c->errstr : "no answer"));
    return 1;
}

/* Connects and authenticates; 0, or -1 with r->why filled. */
static int redis_connect(jw_redis_t *r)
{
    struct timeval tv = {0, CONNECT_TIMEOUT_MS * 1000};
    redisReply *reply = NULL;
    int bad;
    r->c = r->sock ? redisConnectUnixWithTimeout(r->sock, tv)
                   : redisConnectWithTimeout(r->host, r->port, tv);
    if (!r->c || r->c->err) {
        apr_snprintf(r->why, sizeof(r->why), "cannot connect: %s",
                     r->c ? r->c->errstr : "out of memory");
        return -1;
    }
    redisSetTimeout(r->c, tv);
    if (!r->password) {
        return 0;
    }
    reply = redisCommand(r->c, "AUTH %s", r->password);
    bad = failed_reply(r, reply, "it refused the password of redis_password_file");
    if (reply) {
        freeReplyObject(reply);
    }
    return bad ? -1 : 0;
}

static void went_down(jw_redis_t *r, apr_time_t now)
{
    if (r->c) {
        redisFree(r->c);
        r->c = NULL;
    }
    r->retry_at = now + r->backoff;
    r->backoff = r->backoff * 2 < BACKOFF_MAX ? r->backoff * 2 : BACKOFF_MAX;
    if (!r->down) {
        r->down = 1;
        JR_LOG(JR09050, 0,
               "Redis (redis) %s: the worker's events reach the event streams by the "
               "notifiers' read of the outbox until it is back",
               r->why);
    }
}

void jw_redis_publish(jw_redis_t *r)
{
    redisReply *reply = NULL;
    apr_time_t now;
    int bad;
    if (!r) {
        return;
    }
    now = apr_time_now();
    if (!r->c && now < r->retry_at) {
        return; /* skipped: the notifiers' own read delivers */
    }
    if (!r->c && redis_connect(r) != 0) {
        went_down(r, now);
        return;
    }
    reply = redisCommand(r->c, "PUBLISH %s 1", JR_EVENTS_CHANNEL);
    bad = failed_reply(r, reply, "PUBLISH failed");
    if (reply) {
        freeReplyObject(reply);
    }
    if (bad) {
        went_down(r, now);
        return;
    }
    r->backoff = BACKOFF_FIRST;
    if (r->down) {
        r->down = 0;
        JR_LOG(JR09051, 0, "Redis (redis) is back: the worker publishes its events again");
    }
}
