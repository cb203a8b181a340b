/* Share links: read-only access for families to one student's journal or to one group's
 * lesson reports, without an account. jr_share.c manages the links (admins everywhere, tutors
 * in their branches); jr_share_public.c answers the people who open them. */
#ifndef JR_SHARE_H
#define JR_SHARE_H

#include "jr_json.h"
#include "jr_router.h"

#define JR_BAN_SHARE "share-bruteforce"
/* Spec 5.11: ten wrong passwords from one address ban it for 24 hours. */
#define JR_SHARE_BAN_THRESHOLD 10
#define JR_SHARE_BAN_WINDOW 86400
#define JR_SHARE_BAN_DURATION 86400LL
/* A token: this prefix and 64 hex digits (256 random bits). */
#define JR_SHARE_TOKEN_PREFIX "sl_"
/* The most entries and lesson reports one opening shows (newest first). */
#define JR_SHARE_ITEMS_MAX 1000

/* jr_share.c: /api/share-links */
jr_op_fn jr_op_share_links_list;   /* GET ?kind=&target_id=: array, X-Total-Count */
jr_op_fn jr_op_share_links_create; /* POST: 201 record + token + url (the only time) */
jr_op_fn jr_op_share_links_revoke; /* DELETE /:id -> {"ok":true} */

/* jr_share_public.c: /api/share/~token, no login */
jr_op_fn jr_op_share_open;   /* GET: the shared content; 401 when a password is needed */
jr_op_fn jr_op_share_unlock; /* POST {password}: the content and a grant for its files */
jr_op_fn jr_op_share_file;   /* GET /files/~name: a photo or file of a shared entry */

/* jr_share_html.c: /share/~token, the same as a page for a phone */
jr_op_fn jr_op_share_page;        /* GET: the page, or its password form */
jr_op_fn jr_op_share_page_unlock; /* POST, a form with password (JR_BODY_UPLOAD) */

/* The SHA-256 a token is stored and looked up as. */
const char *jr_share_token_hash(apr_pool_t *p, const char *token);

extern const jr_field_spec_t jr_fields_share[];

/* The body of POST /api/share-links (the route's field table). */
extern const jr_field_t jr_fields_share_link_create[];

#endif
