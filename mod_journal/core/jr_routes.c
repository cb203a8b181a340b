/* The route tables: which endpoints exist, at a glance. */
#include "jr_ops.h"

#define ADMIN JR_RF_ADMIN
#define SESSION JR_AUTH_SESSION
#define NONE JR_AUTH_NONE

const jr_route_t jr_routes_admin[] = {
    {"GET", "/api/health", jr_op_health, NONE, JR_BODY_NONE, JR_RF_DB_OPTIONAL},

    {"POST", "/api/auth/login", jr_op_login, NONE, JR_BODY_JSON, 0},
    {"POST", "/api/auth/logout", jr_op_logout, SESSION, JR_BODY_NONE, 0},
    {"GET", "/api/auth/me", jr_op_me, SESSION, JR_BODY_NONE, 0},

    {"GET", "/api/users", jr_op_users_list, SESSION, JR_BODY_NONE, ADMIN},
    {"POST", "/api/users", jr_op_users_create, SESSION, JR_BODY_JSON, ADMIN},
    {"GET", "/api/users/:id", jr_op_users_get, SESSION, JR_BODY_NONE, ADMIN},
    {"PUT", "/api/users/:id", jr_op_users_update, SESSION, JR_BODY_JSON, ADMIN},
    {"DELETE", "/api/users/:id", jr_op_users_delete, SESSION, JR_BODY_NONE, ADMIN},

    {"GET", "/api/branches", jr_op_branches_list, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/branches", jr_op_branches_create, SESSION, JR_BODY_JSON, ADMIN},
    {"GET", "/api/branches/:id", jr_op_branches_get, SESSION, JR_BODY_NONE, 0},
    {"PUT", "/api/branches/:id", jr_op_branches_update, SESSION, JR_BODY_JSON, ADMIN},
    {"DELETE", "/api/branches/:id", jr_op_branches_delete, SESSION, JR_BODY_NONE, ADMIN},

    {"GET", "/api/groups", jr_op_groups_list, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/groups", jr_op_groups_create, SESSION, JR_BODY_JSON, ADMIN},
    {"GET", "/api/groups/:id", jr_op_groups_get, SESSION, JR_BODY_NONE, 0},
    {"PUT", "/api/groups/:id", jr_op_groups_update, SESSION, JR_BODY_JSON, ADMIN},
    {"DELETE", "/api/groups/:id", jr_op_groups_delete, SESSION, JR_BODY_NONE, ADMIN},
    {"POST", "/api/groups/:id/restore", jr_op_groups_restore, SESSION, JR_BODY_NONE, ADMIN},

    {"GET", "/api/api-keys", jr_op_keys_list, SESSION, JR_BODY_NONE, ADMIN},
    {"GET", "/api/api-keys/meta", jr_op_keys_meta, SESSION, JR_BODY_NONE, ADMIN},
    {"POST", "/api/api-keys", jr_op_keys_create, SESSION, JR_BODY_JSON, ADMIN},
    {"GET", "/api/api-keys/:id", jr_op_keys_get, SESSION, JR_BODY_NONE, ADMIN},
    {"PUT", "/api/api-keys/:id", jr_op_keys_update, SESSION, JR_BODY_JSON, ADMIN},
    {"DELETE", "/api/api-keys/:id", jr_op_keys_delete, SESSION, JR_BODY_NONE, ADMIN},
    {"POST", "/api/api-keys/:id/rotate", jr_op_keys_rotate, SESSION, JR_BODY_NONE, ADMIN},

    {"GET", "/api/bans", jr_op_bans_list, SESSION, JR_BODY_NONE, ADMIN},
    {"DELETE", "/api/bans/~ip", jr_op_bans_delete, SESSION, JR_BODY_NONE, ADMIN},

    {"GET", "/api/audit", jr_op_audit_list, SESSION, JR_BODY_NONE, ADMIN},

    {"GET", "/api/settings", jr_op_settings_get, SESSION, JR_BODY_NONE, ADMIN},
    {"PUT", "/api/settings", jr_op_settings_put, SESSION, JR_BODY_JSON, ADMIN},
    {"GET", "/api/public-settings", jr_op_public_settings, NONE, JR_BODY_NONE, 0},

    {NULL, NULL, NULL, NONE, JR_BODY_NONE, 0},
};

/* The external interface: API keys only (see docs/integrators.md). */
#define KEY JR_AUTH_KEY

const jr_route_t jr_routes_v1[] = {
    {"GET", "/api/v1/me", jr_op_v1_me, KEY, JR_BODY_NONE, 0},
    {"GET", "/api/v1/branches", jr_op_branches_list, KEY, JR_BODY_NONE, 0},
    {"GET", "/api/v1/groups", jr_op_groups_list, KEY, JR_BODY_NONE, 0},

    {NULL, NULL, NULL, NONE, JR_BODY_NONE, 0},
};
