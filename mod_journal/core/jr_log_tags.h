/* Every log message tag of the project and its level, once (an X-macro). A message is logged
 * with its tag as an identifier, and its level comes from here:
 *   core, worker    JR_LOG(JR01005, rv, "statement %s failed: %s", label, why)   (jr_log.h)
 *   httpd's glue    MJ_LOG(JR00004, s, rv, "database migration failed: %s", why) (mj_private.h)
 * so an unregistered tag does not compile, and the tag, a colon and a space start the line.
 * The format stays at the call site: the compiler checks it against its arguments, and the
 * message reads where it is logged. scripts/check-log-tags.py (make check) holds the rest:
 * each tag registered once, used, always with the same format (one message per tag, wherever
 * it is logged from), and a row of the table in docs/operations.md ("Logs") with its level.
 *
 * Levels: CRIT (httpd's glue only: httpd does not start), ERR, WARN, INFO, DEBUG.
 * Ranges: JR00nnn the module's glue, JR01nnn database, JR02nnn shared counters, JR03nnn
 * authentication and bans, JR04nnn trash, JR05nnn stored files, JR06nnn journal-worker,
 * JR07nnn jobs and events, JR08nnn photo jobs. */
#ifndef JR_LOG_TAGS_H
#define JR_LOG_TAGS_H

/* clang-format off */
#define JR_LOG_TAGS(X)                                                                        \
    /* the module's glue: startup and configuration */                                       \
    X(JR00001, CRIT)                                                                          \
    X(JR00002, CRIT)                                                                          \
    X(JR00003, WARN)                                                                          \
    X(JR00004, CRIT)                                                                          \
    X(JR00005, INFO)                                                                          \
    X(JR00006, CRIT)                                                                          \
    X(JR00007, ERR)                                                                           \
    X(JR00008, CRIT)                                                                          \
    X(JR00009, CRIT)                                                                          \
    X(JR00010, ERR)                                                                           \
    X(JR00011, CRIT)                                                                          \
    X(JR00070, WARN)                                                                          \
    /* the module's glue: requests and housekeeping */                                       \
    X(JR00020, ERR)                                                                           \
    X(JR00021, ERR)                                                                           \
    X(JR00030, WARN)                                                                          \
    X(JR00031, CRIT)                                                                          \
    X(JR00040, INFO)                                                                          \
    X(JR00041, WARN)                                                                          \
    X(JR00050, ERR)                                                                           \
    /* the module's glue: the worker processes httpd supervises. JR00100 is logged at INFO   \
     * when no AI is configured (MJ_LOG_AT); JR00105 and JR00106 are written by the forked   \
     * child to standard error before it runs the worker. */                                 \
    X(JR00100, WARN)                                                                          \
    X(JR00101, WARN)                                                                          \
    X(JR00102, ERR)                                                                           \
    X(JR00103, WARN)                                                                          \
    X(JR00104, ERR)                                                                           \
    X(JR00105, ERR)                                                                           \
    X(JR00106, ERR)                                                                           \
    X(JR00107, CRIT)                                                                          \
    X(JR00108, INFO)                                                                          \
    X(JR00109, CRIT)                                                                          \
    X(JR00120, ERR)                                                                           \
    X(JR00121, WARN)                                                                          \
    X(JR00122, WARN)                                                                          \
    X(JR00123, DEBUG)                                                                         \
    /* database */                                                                            \
    X(JR01001, WARN)                                                                          \
    X(JR01002, ERR)                                                                           \
    X(JR01003, ERR)                                                                           \
    X(JR01004, ERR)                                                                           \
    X(JR01005, ERR)                                                                           \
    X(JR01006, ERR)                                                                           \
    X(JR01007, ERR)                                                                           \
    X(JR01008, WARN)                                                                          \
    X(JR01010, INFO)                                                                          \
    X(JR01020, ERR)                                                                           \
    X(JR01021, WARN)                                                                          \
    X(JR01022, WARN)                                                                          \
    X(JR01030, ERR)                                                                           \
    X(JR01031, WARN)                                                                          \
    X(JR01032, ERR)                                                                           \
    X(JR01033, ERR)                                                                           \
    /* shared counters */                                                                     \
    X(JR02001, WARN)                                                                          \
    X(JR02010, WARN)                                                                          \
    X(JR02011, WARN)                                                                          \
    X(JR02012, WARN)                                                                          \
    X(JR02013, WARN)                                                                          \
    /* authentication and bans */                                                             \
    X(JR03001, WARN)                                                                          \
    X(JR03002, WARN)                                                                          \
    X(JR03010, WARN)                                                                          \
    /* trash */                                                                               \
    X(JR04001, INFO)                                                                          \
    /* stored files */                                                                        \
    X(JR05001, WARN)                                                                          \
    X(JR05002, ERR)                                                                           \
    X(JR05003, ERR)                                                                           \
    X(JR05004, ERR)                                                                           \
    X(JR05010, ERR)                                                                           \
    X(JR05011, WARN)                                                                          \
    X(JR05012, ERR)                                                                           \
    X(JR05013, ERR)                                                                           \
    X(JR05020, WARN)                                                                          \
    X(JR05021, ERR)                                                                           \
    X(JR05022, ERR)                                                                           \
    X(JR05023, ERR)                                                                           \
    /* journal-worker */                                                                      \
    X(JR06001, INFO)                                                                          \
    X(JR06002, ERR)                                                                           \
    X(JR06003, ERR)                                                                           \
    X(JR06004, INFO)                                                                          \
    X(JR06005, INFO)                                                                          \
    X(JR06006, ERR)                                                                           \
    X(JR06007, ERR)                                                                           \
    X(JR06008, ERR)                                                                           \
    X(JR06010, WARN)                                                                          \
    X(JR06011, INFO)                                                                          \
    X(JR06012, WARN)                                                                          \
    X(JR06013, ERR)                                                                           \
    X(JR06014, ERR)                                                                           \
    X(JR06015, INFO)                                                                          \
    X(JR06016, DEBUG)                                                                         \
    X(JR06020, ERR)                                                                           \
    X(JR06021, WARN)                                                                          \
    X(JR06030, ERR)                                                                           \
    /* jobs and events */                                                                     \
    X(JR07001, INFO)                                                                          \
    X(JR07002, WARN)                                                                          \
    X(JR07003, WARN)                                                                          \
    /* notifications and event streams */                                                     \
    X(JR09000, INFO)                                                                          \
    X(JR09001, ERR)                                                                           \
    X(JR09002, WARN)                                                                          \
    X(JR09003, ERR)                                                                           \
    X(JR09004, WARN)                                                                          \
    X(JR09005, INFO)                                                                          \
    X(JR09006, ERR)                                                                           \
    X(JR09007, ERR)                                                                           \
    X(JR09008, ERR)                                                                           \
    X(JR09009, INFO)                                                                          \
    X(JR09050, WARN)                                                                          \
    X(JR09051, INFO)                                                                          \
    X(JR09052, CRIT)                                                                          \
    /* /api/v1 sync: idempotency, cursors, conditional requests */                          \
    X(JR11000, ERR)                                                                           \
    X(JR11001, ERR)                                                                           \
    /* share links and backups */                                                             \
    X(JR10001, ERR)                                                                           \
    X(JR10002, ERR)                                                                           \
    X(JR10003, ERR)                                                                           \
    X(JR10004, ERR)                                                                           \
    X(JR10005, ERR)                                                                           \
    X(JR10006, INFO)                                                                          \
    X(JR10007, ERR)                                                                           \
    X(JR10008, INFO)                                                                          \
    /* photo jobs */                                                                          \
    X(JR08001, WARN)                                                                          \
    X(JR08002, ERR)                                                                           \
    X(JR08003, ERR)                                                                           \
    X(JR08004, ERR)                                                                           \
    X(JR08010, WARN)                                                                          \
    X(JR08011, INFO)                                                                          \
    X(JR08012, ERR)                                                                           \
    /* the response cache */                                                                  \
    X(JR12000, WARN)                                                                          \
    X(JR12001, DEBUG)                                                                         \
    X(JR12002, DEBUG)                                                                         \
    X(JR12003, DEBUG)                                                                         \
    /* SQLite's write path */                                                                 \
    X(JR12120, WARN)                                                                          \
    X(JR12121, WARN)                                                                          \
    X(JR12122, WARN)                                                                          \
    X(JR12123, WARN)                                                                          \
    /* the read path */                                                                       \
    X(JR12140, DEBUG)                                                                         \
    X(JR12141, DEBUG)                                                                         \
    /* the workers' wake-ups after commit */                                                  \
    X(JR12160, WARN)                                                                          \
    X(JR12161, WARN)                                                                          \
    X(JR12162, WARN)
/* clang-format on */

#endif
