/* Every Journal* directive, once. The list is expanded by its users (an X-macro):
 *   jr_config.h   a field of jr_config_t per row (the module's per-server configuration is
 *                 that struct, so the core reads the directives without a copy)
 *   jr_config.c   the defaults (designated initializers), the descriptors for checking,
 *                 merging and resolving, and compile-time checks of the rows
 *   mj_config.c   the command_rec rows with their help text
 *   scripts/check-directives-doc.sh   runs the preprocessor over this file: every directive
 *                 has its section in docs/directives.md, with its context and message
 * This header includes nothing: the docs guard preprocesses it on its own, and the core stays
 * free of httpd headers.
 *
 * A row: X(field, type, "Name", kind, scope, min, max, default, "allowed values", "help")
 *   kind   INT, DURATION (seconds; s m h d units), SIZE (bytes; K M G units): one shared
 *          check of the bounds, refused with "Name: 'value' is not valid: use <allowed values>";
 *          FLAG: On or Off; TEXT (one value) and LIST (values appended, one directive line or
 *          several): checked by the glue's check_<field> in mj_config.c
 *   scope  ANY: server config and virtual hosts; MAIN: the main server only (httpd runs one
 *          set of workers for it, so a value in <VirtualHost> would mean nothing)
 *   type   int or long long for INT, DURATION, SIZE and FLAG (-1 while unset), const char *
 *          for TEXT and LIST (NULL while unset)
 * Values the rows of two directives must satisfy together are checked in
 * jr_config_resolve(). Keep the order: it is the order of `apache2 -L`.
 * JR_DEFAULT_WORKER_PATH is the build's $(bindir)/journal-worker (see jr_config.c). */
#ifndef JR_CONFIG_LIST_H
#define JR_CONFIG_LIST_H

#define JR_DEFAULT_UPLOAD_TYPES                                                               \
    "application/pdf image/jpeg image/png image/webp image/gif text/plain text/csv "          \
    "application/msword application/vnd.openxmlformats-officedocument.wordprocessingml.document " \
    "application/vnd.oasis.opendocument.text"

#define JR_DAYS(n) ((n) * 86400LL)
#define JR_KIB(n) ((n) * 1024LL)
#define JR_MIB(n) ((n) * 1024LL * 1024)
#define JR_GIB(n) ((n) * 1024LL * 1024 * 1024)

/* clang-format off */
#define JR_DIRECTIVES(X)                                                                           \
X(data_dir, const char *, "JournalDataDir", TEXT, ANY, 0, 0, "/var/lib/mod_journal", NULL,         \
  "Directory for the journal's files (uploads, photos)")                                           \
X(migrate, int, "JournalMigrate", FLAG, ANY, 0, 1, 1, NULL,                                        \
  "Apply database migrations at startup (On or Off)")                                              \
X(session_ttl, long long, "JournalSessionLifetime", DURATION, ANY, 60, JR_DAYS(366), 12 * 3600,    \
  "a duration from 60s to 366d (seconds, or a number with s, m, h or d)",                          \
  "Lifetime of a login session")                                                                   \
X(max_body, long long, "JournalMaxBodySize", SIZE, ANY, JR_KIB(1), JR_GIB(1), JR_MIB(1),           \
  "a size from 1K to 1G (bytes, or a number with K, M or G)", "Largest accepted request body")     \
X(bcrypt_cost, int, "JournalBcryptCost", INT, ANY, 4, 15, 10, "an integer from 4 to 15",           \
  "bcrypt cost for new password hashes")                                                           \
X(rate_default, int, "JournalRateLimitDefault", INT, ANY, 1, 10000000, 60,                         \
  "an integer from 1 to 10000000 (and at most JournalRateLimitMax)",                               \
  "rate_limit_per_min of API keys created without one")                                            \
X(rate_max, int, "JournalRateLimitMax", INT, ANY, 1, 10000000, 10000,                              \
  "an integer from 1 to 10000000", "Largest rate_limit_per_min an API key may have")               \
X(key_ban_threshold, int, "JournalKeyBanThreshold", INT, ANY, 1, 100000, 20,                       \
  "an integer from 1 to 100000",                                                                   \
  "Wrong API keys from one IP, within the window, that lead to a ban")                             \
X(key_ban_window, int, "JournalKeyBanWindow", DURATION, ANY, 10, 86400, 600,                       \
  "a duration from 10s to 1d", "Window in which wrong API keys are counted")                       \
X(key_ban_duration, long long, "JournalKeyBanDuration", DURATION, ANY, 60, JR_DAYS(366), 3600,     \
  "a duration from 60s to 366d", "Length of a ban for API key guessing")                           \
X(login_ban_threshold, int, "JournalLoginBanThreshold", INT, ANY, 1, 100000, 10,                   \
  "an integer from 1 to 100000",                                                                   \
  "Failed logins from one IP, within the window, that lead to a ban")                              \
X(login_ban_window, int, "JournalLoginBanWindow", DURATION, ANY, 10, 86400, 900,                   \
  "a duration from 10s to 1d", "Window in which failed logins are counted")                        \
X(login_ban_duration, long long, "JournalLoginBanDuration", DURATION, ANY, 60, JR_DAYS(366),       \
  86400, "a duration from 60s to 366d", "Length of a ban for failed logins")                       \
X(honeypot_ban_duration, long long, "JournalHoneypotBanDuration", DURATION, ANY, 60,               \
  JR_DAYS(366), 86400, "a duration from 60s to 366d",                                              \
  "Length of a ban for a filled honeypot field")                                                   \
X(upload_max, long long, "JournalMaxUploadSize", SIZE, ANY, JR_KIB(1), JR_GIB(4), JR_MIB(20),      \
  "a size from 1K to 4G (bytes, or a number with K, M or G)",                                      \
  "Largest accepted upload (entry file or photo)")                                                 \
X(purge_interval, long long, "JournalHousekeepingInterval", DURATION, ANY, 5, 86400, 3600,         \
  "a duration from 5s to 1d",                                                                      \
  "How often housekeeping (old temp files, the trash purge) runs")                                 \
X(login_throttle_threshold, int, "JournalLoginThrottleThreshold", INT, ANY, 1, 100000, 10,         \
  "an integer from 1 to 100000",                                                                   \
  "Failed logins for one account, within the window, that throttle it")                            \
X(login_throttle_window, int, "JournalLoginThrottleWindow", DURATION, ANY, 10, 86400, 900,         \
  "a duration from 10s to 1d", "Window in which failed logins for one account are counted")        \
X(login_throttle_max_backoff, int, "JournalLoginThrottleMaxBackoff", DURATION, ANY, 1, 3600,       \
  900, "a duration from 1s to 1h",                                                                 \
  "Longest wait of a throttled account (the back-off doubles up to it)")                           \
X(counter_slots, long long, "JournalCounterSlots", INT, ANY, JR_SHM_MIN_SLOTS,                     \
  JR_SHM_MAX_SLOTS, JR_SHM_DEFAULT_SLOTS, "an integer from 64 to 1048576",                         \
  "Slots of each table of the shared counters")                                                    \
X(report_versions_max, int, "JournalReportVersionsMax", INT, ANY, 2, 100000, 200,                  \
  "an integer from 2 to 100000",                                                                   \
  "Versions kept per lesson report (the original and the newest others)")                          \
X(event_retention, long long, "JournalEventRetention", DURATION, ANY, 60, JR_DAYS(366),            \
  JR_DAYS(7), "a duration from 60s to 366d",                                                       \
  "How long outbox events are kept before housekeeping trims them")                                \
X(upload_types, const char *, "JournalUploadTypes", LIST, ANY, 0, 0, JR_DEFAULT_UPLOAD_TYPES,      \
  NULL, "Media types (sniffed from the bytes) accepted as entry files")                            \
X(worker_supervised, int, "JournalWorker", FLAG, MAIN, 0, 1, 1, NULL,                              \
  "Start and supervise the journal-worker processes (On or Off)")                                  \
X(worker_processes, int, "JournalWorkerProcesses", INT, MAIN, 1, 16, 1,                            \
  "an integer from 1 to 16", "Number of journal-worker processes httpd supervises")                \
X(worker_path, const char *, "JournalWorkerPath", TEXT, MAIN, 0, 0, JR_DEFAULT_WORKER_PATH,        \
  NULL, "Path of the journal-worker program")                                                      \
X(ai_endpoint, const char *, "JournalAIEndpoint", TEXT, MAIN, 0, 0, NULL, NULL,                    \
  "Base URL of an OpenAI-compatible API for the AI text checks")                                   \
X(ai_model, const char *, "JournalAIModel", TEXT, MAIN, 0, 0, NULL, NULL,                          \
  "Model name sent to the AI endpoint")                                                            \
X(ai_key_file, const char *, "JournalAIKeyFile", TEXT, MAIN, 0, 0, NULL, NULL,                     \
  "File holding the bearer key of the AI endpoint")                                                \
X(ai_timeout, int, "JournalAITimeout", DURATION, MAIN, 1, 3600, 60,                                \
  "a duration from 1s to 1h (seconds, or a number with s, m or h)",                                \
  "Timeout of one request to the AI endpoint")                                                     \
X(ai_concurrency, int, "JournalAIConcurrency", INT, MAIN, 1, 256, 4, "an integer from 1 to 256",   \
  "AI requests in flight per worker process")                                                     \
X(stream_max, int, "JournalStreamMax", INT, ANY, 1, 100000, 48, "an integer from 1 to 100000",     \
  "Event streams one httpd child holds at most (an eighth of ThreadsPerChild is kept free)")      \
X(stream_heartbeat, int, "JournalStreamHeartbeat", DURATION, ANY, 1, 300, 15,                      \
  "a duration from 1s to 5m", "Interval of the comment line that keeps an event stream alive")    \
X(redis, const char *, "JournalRedis", TEXT, MAIN, 0, 0, NULL, NULL,                               \
  "Redis server (host:port, or the path of a unix socket) that carries event wake-ups")            \
X(redis_password_file, const char *, "JournalRedisPasswordFile", TEXT, MAIN, 0, 0, NULL, NULL,     \
  "File holding the password of the JournalRedis server")                                          \
X(public_url, const char *, "JournalPublicURL", TEXT, ANY, 0, 0, NULL, NULL,                     \
  "Base URL by which families reach the server (absolute share link URLs behind a proxy)")         \
X(share_ttl, long long, "JournalShareLinkLifetime", DURATION, ANY, 3600, JR_DAYS(3650),           \
  JR_DAYS(30), "a duration from 1h to 3650d",                                                      \
  "Lifetime of a share link created without expires_at")                                           \
X(share_ttl_max, long long, "JournalShareLinkMaxLifetime", DURATION, ANY, 3600, JR_DAYS(3650),    \
  JR_DAYS(365), "a duration from 1h to 3650d",                                                     \
  "Longest lifetime a share link may be given")                                                   \
X(backup_schedule, const char *, "JournalBackupSchedule", TEXT, MAIN, 0, 0, NULL, NULL,            \
  "Daily time (HH:MM, the journal's time zone) of a backup taken by httpd")                        \
X(backup_keep, int, "JournalBackupKeep", INT, MAIN, 1, 10000, 7, "an integer from 1 to 10000",     \
  "Backups kept in the backups directory when scheduled backups run")                              \
X(photo_ai_endpoint, const char *, "JournalPhotoAIEndpoint", TEXT, MAIN, 0, 0, NULL, NULL,         \
  "Base URL of the AI photo service (upscaling, face restoration)")                                \
X(photo_ai_timeout, int, "JournalPhotoAITimeout", INT, MAIN, 1000, 3600000, 600000,                \
  "an integer from 1000 to 3600000 (milliseconds)",                                                \
  "Timeout of a photo service request with face restoration, in milliseconds")                     \
X(photo_upscale_timeout, int, "JournalPhotoUpscaleTimeout", INT, MAIN, 1000, 3600000, 120000,      \
  "an integer from 1000 to 3600000 (milliseconds)",                                                \
  "Timeout of a plain upscale request to the photo service, in milliseconds")                      \
X(response_cache, int, "JournalResponseCache", FLAG, ANY, 0, 1, 1, NULL,                           \
  "Keep rendered list answers, invalidated by every write (On or Off)")                            \
X(response_cache_size, long long, "JournalResponseCacheSize", SIZE, MAIN, JR_KIB(64), JR_GIB(1),   \
  JR_MIB(4), "a size from 64K to 1G (bytes, or a number with K, M or G)",                          \
  "Memory for cached list answers in each httpd child process")                                    \
X(sqlite_cache, long long, "JournalSQLiteCacheSize", SIZE, MAIN, JR_KIB(64), JR_GIB(1),            \
  JR_KIB(512), "a size from 64K to 1G (bytes, or a number with K, M or G)",                        \
  "SQLite page cache of each pooled database connection (DBDMax per httpd child)")              \
X(sqlite_busy_timeout, int, "JournalSQLiteBusyTimeout", INT, MAIN, 100, 600000, 5000,            \
  "an integer from 100 to 600000 (milliseconds)",                                                  \
  "Longest wait of an SQLite write for its turn (the write queue, SQLite's busy timeout), in ms")  \
X(malloc_arenas, int, "JournalMallocArenas", INT, MAIN, 0, 64, 2,                                  \
  "an integer from 0 to 64 (0 leaves malloc's default)",                                           \
  "glibc malloc arenas of each httpd child (M_ARENA_MAX); MALLOC_ARENA_MAX in the environment wins")\
X(active_requests, int, "JournalActiveRequests", INT, MAIN, 0, 100000, 16,                         \
  "an integer from 0 to 100000 (0: no limit)",                                                     \
  "Requests each httpd child runs at once; the others wait their turn in order (0: no limit)")
/* clang-format on */

#endif
