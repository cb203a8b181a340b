/* Redis publish/subscribe for the event streams (docs/events.md, "Redis"): after a write,
 * the child that served it publishes on one channel; every child of every node subscribes,
 * and a message makes its notifier read the outbox at once. Redis carries wake-ups only: the
 * outbox is the truth, so a lost message delays nothing beyond the notifier's own read once
 * a second, and a message twice is one more read. When Redis is down the children fall back
 * to the node's shared-memory counter, and the subscriber reconnects by itself. */
#include <string.h>
#include <sys/socket.h>

#include <apr_strings.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include <hiredis/hiredis.h>

#include "jr_events.h"
#include "jr_util.h"
#include "mj_private.h"

#define RETRY apr_time_from_sec(1)

static struct {
    server_rec *s;
    const char *host, *sock, *password; /* from JournalRedis and its password file */
    int port;
    /* publishing, from request threads */
    apr_thread_mutex_t *pub_mu;
    redisContext *pub;
    apr_time_t pub_retry_at;
    /* subscribing, one thread */
    apr_thread_mutex_t *sub_mu;
    redisContext *sub;
    apr_thread_t *thread;
    volatile int stop;
    volatile int down_logged;
    void (*on_message)(void);
} R;

int mj_redis_post_config(apr_pool_t *pconf, server_rec *s)
{
    const jr_config_t *c = mj_conf(s);
    apr_status_t rv;

    memset(&R, 0, sizeof(R));
    R.s = s;
    if (!c->redis) {
        return OK;
    }
    jr_redis_address(pconf, c->redis, &R.host, &R.port, &R.sock); /* checked when read */
    if (c->redis_password_file) {
        /* Read as root at startup: the file may be closed to the children's user. */
        if ((rv = jr_read_secret(pconf, c->redis_password_file, &R.password)) != APR_SUCCESS) {
            MJ_LOG(JR09007, s, rv, "cannot read a password from JournalRedisPasswordFile %s",
                   c->redis_password_file);
            return !OK;
        }
    }
    return OK;
}

static redisContext *connect_redis(void)
{
    struct timeval tv = {0, 500000};
    redisContext *c = R.sock ? redisConnectUnixWithTimeout(R.sock, tv)
                             : redisConnectWithTimeout(R.host, R.port, tv);
    redisReply *reply;
    if (!c || c->err) {
        if (c) {
            redisFree(c);
        }
        return NULL;
    }
    if (R.password) {
        reply = redisCommand(c, "AUTH %s", R.password);
        if (!reply || reply->type == REDIS_REPLY_ERROR) {
            MJ_LOG(JR09006, R.s, 0, "Redis refused the password of JournalRedisPasswordFile");
            if (reply) {
                freeReplyObject(reply);
            }
            redisFree(c);
            return NULL;
        }
        freeReplyObject(reply);
    }
    return c;
}

static void log_down(const char *what)
{
    if (!R.down_logged) {
        R.down_logged = 1;
        MJ_LOG(JR09004, R.s, 0,
               "Redis (JournalRedis) %s: event streams are woken through this node's "
               "shared memory until it is back",
               what);
    }
}

void mj_redis_publish(void)
{
    redisReply *reply = NULL;
    apr_time_t now;
    /* A publisher that is busy (or connecting to a Redis that is down) is skipped: the
     * node's own streams are woken through shared memory anyway. */
    if (!R.pub_mu || apr_thread_mutex_trylock(R.pub_mu) != APR_SUCCESS) {
        return;
    }
    now = apr_time_now();
    if (!R.pub && now >= R.pub_retry_at && !(R.pub = connect_redis())) {
        R.pub_retry_at = now + RETRY;
    }
    if (R.pub && (!(reply = redisCommand(R.pub, "PUBLISH %s 1", JR_EVENTS_CHANNEL)) ||
                  reply->type == REDIS_REPLY_ERROR)) {
        redisFree(R.pub);
        R.pub = NULL;
        R.pub_retry_at = now + RETRY;
    }
    if (reply) {
        freeReplyObject(reply);
    }
    apr_thread_mutex_unlock(R.pub_mu);
}

/* Subscribes and passes messages on until the connection fails; 0 when it never got to
 * subscribe. */
static int listen_once(void)
{
    struct timeval forever = {0, 0};
    redisContext *c = connect_redis();
    redisReply *reply;
    if (!c) {
        return 0;
    }
    if (!(reply = redisCommand(c, "SUBSCRIBE %s", JR_EVENTS_CHANNEL)) ||
        reply->type == REDIS_REPLY_ERROR) {
        if (reply) {
            freeReplyObject(reply);
        }
        redisFree(c);
        return 0;
    }
    freeReplyObject(reply);
    redisSetTimeout(c, forever);
    apr_thread_mutex_lock(R.sub_mu);
    R.sub = R.stop ? NULL : c;
    apr_thread_mutex_unlock(R.sub_mu);
    if (R.stop) {
        redisFree(c);
        return 1;
    }
    R.down_logged = 0;
    MJ_LOG(JR09005, R.s, 0, "subscribed to Redis channel " JR_EVENTS_CHANNEL);
    R.on_message(); /* what was written while Redis was away */
    while (redisGetReply(c, (void **)&reply) == REDIS_OK && reply) {
        R.on_message();
        freeReplyObject(reply);
    }
    apr_thread_mutex_lock(R.sub_mu);
    R.sub = NULL;
    apr_thread_mutex_unlock(R.sub_mu);
    redisFree(c);
    return 1;
}

static void *APR_THREAD_FUNC subscriber(apr_thread_t *thread, void *data)
{
    while (!R.stop) {
        int i;
        if (listen_once()) {
            if (!R.stop) {
                log_down("lost the connection");
            }
        } else {
            log_down("is unavailable");
        }
        for (i = 0; i < 10 && !R.stop; ++i) {
            apr_sleep(RETRY / 10);
        }
    }
    apr_thread_exit(thread, APR_SUCCESS);
    return NULL;
}

static apr_status_t subscriber_stop(void *data)
{
    apr_status_t rv;
    R.stop = 1;
    apr_thread_mutex_lock(R.sub_mu);
    if (R.sub) {
        shutdown(R.sub->fd, SHUT_RDWR); /* ends the blocking read */
    }
    apr_thread_mutex_unlock(R.sub_mu);
    apr_thread_join(&rv, R.thread);
    apr_thread_mutex_lock(R.pub_mu);
    if (R.pub) {
        redisFree(R.pub);
        R.pub = NULL;
    }
    apr_thread_mutex_unlock(R.pub_mu);
    return APR_SUCCESS;
}

void mj_redis_child_init(apr_pool_t *pchild, void (*on_message)(void))
{
    apr_status_t rv;
    if (!R.host && !R.sock) {
        return;
    }
    R.on_message = on_message;
    if ((rv = apr_thread_mutex_create(&R.pub_mu, APR_THREAD_MUTEX_DEFAULT, pchild)) !=
            APR_SUCCESS ||
        (rv = apr_thread_mutex_create(&R.sub_mu, APR_THREAD_MUTEX_DEFAULT, pchild)) !=
            APR_SUCCESS ||
        (rv = apr_thread_create(&R.thread, NULL, subscriber, NULL, pchild)) != APR_SUCCESS) {
        MJ_LOG(JR09008, R.s, rv, "cannot start the Redis subscriber of the event streams");
        R.pub_mu = NULL;
        return;
    }
    apr_pool_pre_cleanup_register(pchild, NULL, subscriber_stop);
}
