#include <ctype.h>
#include <string.h>

#include "jr_stmts.h"

typedef struct {
    const char *sql;    /* both dialects, or SQLite when sql_pg is set */
    const char *sql_pg; /* PostgreSQL, or NULL */
} stmt_def_t;

/* A row has one or two texts (JR_SCOPED gives two): the missing PostgreSQL text is NULL. */
#define JR_Q_DEF_(id, sql, pg, ...) [JR_Q_##id] = {sql, pg},
#define JR_Q_DEF_ROW_(id, ...) JR_Q_DEF_(id, __VA_ARGS__, NULL, ~)
static const stmt_def_t defs[JR_Q__COUNT] = {JR_STMT_CATALOGUE(JR_Q_DEF_ROW_)};

#define JR_Q_NAME_ROW_(id, ...) [JR_Q_##id] = #id,
static const char *const ids[JR_Q__COUNT] = {JR_STMT_CATALOGUE(JR_Q_NAME_ROW_)};

#define JR_Q_LEN_ROW_(id, ...) \
    _Static_assert(sizeof(#id) <= JR_STMT_LABEL_MAX, "statement id too long: " #id);
JR_STMT_CATALOGUE(JR_Q_LEN_ROW_)

#define JR_PG_PREFIX "jr_"

/* Derived once (jr_stmts_init): "jr_" + the id in lower case, and per statement its
 * parameter count and write flag. */
static char names[JR_Q__COUNT][sizeof(JR_PG_PREFIX) + JR_STMT_LABEL_MAX];
static unsigned char nparams[JR_Q__COUNT];
static unsigned char writes[JR_Q__COUNT];
static int ready;

static int count_params(const char *sql)
{
    int n = 0;
    for (; *sql; ++sql) {
        if (sql[0] == '%' && (sql[1] == 's' || sql[1] == '%' || sql[1] == '=')) {
            n += sql[1] == 's';
            ++sql;
        }
    }
    return n;
}

/* The next word of sql outside string literals and quoted names, upper-cased into w; the
 * position after it, or NULL at the end. */
static const char *next_word(const char *s, char *w, size_t wmax)
{
    size_t n = 0;
    while (*s) {
        if (*s == '\'' || *s == '"') {
            char q = *s++;
            while (*s && *s != q) {
                ++s;
            }
            s += *s ? 1 : 0;
        } else if (isalpha((unsigned char)*s) || *s == '_') {
            while (isalnum((unsigned char)*s) || *s == '_') {
                if (n + 1 < wmax) {
                    w[n++] = (char)toupper((unsigned char)*s);
                }
                ++s;
            }
            w[n] = '\0';
            return s;
        } else {
            ++s;
        }
    }
    return NULL;
}

static int sql_writes(const char *sql)
{
    char first[16], w[16], prev[16] = "";
    const char *s = next_word(sql, first, sizeof(first));
    int select = s && !strcmp(first, "SELECT"), with = s && !strcmp(first, "WITH");
    if (!select && !with) {
        return 1;
    }
    while ((s = next_word(s, w, sizeof(w))) != NULL) {
        if (!strcmp(prev, "FOR") && (!strcmp(w, "UPDATE") || !strcmp(w, "SHARE") ||
                                     !strcmp(w, "NO") || !strcmp(w, "KEY"))) {
            return 1; /* a row lock lasts until the transaction ends */
        }
        if (with && (!strcmp(w, "INSERT") || !strcmp(w, "UPDATE") || !strcmp(w, "DELETE"))) {
            return 1;
        }
        strcpy(prev, w);
    }
    return 0;
}

void jr_stmts_init(void)
{
    int i;
    size_t k;
    if (ready) {
        return;
    }
    for (i = 0; i < JR_Q__COUNT; ++i) {
        char *name = names[i];
        memcpy(name, JR_PG_PREFIX, sizeof(JR_PG_PREFIX) - 1);
        for (k = 0; ids[i][k]; ++k) {
            name[sizeof(JR_PG_PREFIX) - 1 + k] = (char)tolower((unsigned char)ids[i][k]);
        }
        name[sizeof(JR_PG_PREFIX) - 1 + k] = '\0';
        nparams[i] = (unsigned char)count_params(defs[i].sql);
        writes[i] = (unsigned char)(sql_writes(defs[i].sql) ||
                                    (defs[i].sql_pg && sql_writes(defs[i].sql_pg)));
    }
    ready = 1;
}

const char *jr_stmt_label(jr_stmt_id_t id)
{
    return names[id] + sizeof(JR_PG_PREFIX) - 1;
}

const char *jr_stmt_server_name(jr_stmt_id_t id)
{
    return names[id];
}

const char *jr_stmt_sql(jr_stmt_id_t id, jr_dialect_e dialect)
{
    return (dialect == JR_DB_PGSQL && defs[id].sql_pg) ? defs[id].sql_pg : defs[id].sql;
}

int jr_stmt_nparams(jr_stmt_id_t id)
{
    return nparams[id];
}

int jr_stmt_writes(jr_stmt_id_t id)
{
    return writes[id];
}
