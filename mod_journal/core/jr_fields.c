/* See jr_field_spec_t in jr_json.h. */
#include "jr_json.h"
#include "jr_share.h"

const jr_field_spec_t *const jr_field_catalogue[] = {
    jr_fields_auth,    jr_fields_branches, jr_fields_entries,  jr_fields_groups, jr_fields_keys,
    jr_fields_lessons, jr_fields_modules,  jr_fields_students, jr_fields_users,  jr_fields_chat,
    jr_fields_share,   jr_fields_photo_jobs, NULL,
};
