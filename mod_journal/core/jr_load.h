/* Loading one record by id, as the operations on a record open: read its row, judge it (it
 * exists, it is live or, for a restore, in the trash, and it lies in the caller's branches)
 * and answer the standard refusal. Each resource family describes its records once (a
 * jr_kind_t) and offers its own jr_<kind>_load() built on jr_load(), so the judgement and the
 * refusals' texts exist once. */
#ifndef JR_LOAD_H
#define JR_LOAD_H

#include "jr_ctx.h"
#include "jr_stmts.h"

typedef struct {
    const char *noun;       /* the 404's "<noun> not found" */
    const char *field;      /* the body field that names one ("group_id"), for JR_LOAD_REF */
    jr_stmt_id_t get;       /* the whole row by id (one parameter), for JR_LOAD_ROW */
    jr_stmt_id_t scope;     /* only what the judgement reads; may be the same as get */
    const char *branch_col; /* the row's branch; NULL: every caller may see every row */
    int soft;               /* the row has deleted_at: deleted rows wait in the trash */
} jr_kind_t;

/* What jr_load() reads and how it refuses; 0: the scope row of a live record, refused 404. */
#define JR_LOAD_ROW 1u     /* the whole row (kind->get) */
#define JR_LOAD_DELETED 2u /* the record must be in the trash: 404 "no deleted <noun> with this id" */
#define JR_LOAD_REF 4u     /* the id came from the body's kind->field: refused 400 naming it */

/* Reads record id of kind and judges it. Returns 0 with the row in *row (when row is not NULL)
 * when the caller may work on it; otherwise the status answered in res: 503 when the database
 * failed, 404 "<noun> not found" (see the flags for the other refusals). A record of a branch
 * the caller cannot see is answered as absent. */
int jr_load(jr_ctx_t *ctx, jr_result_t *res, const jr_kind_t *kind, long long id, unsigned flags,
            jr_rows_t **row);

#endif
