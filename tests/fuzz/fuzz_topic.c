/* The N/M reader of lesson topics (jr_topic.c), with two properties as an oracle: words
 * before the topic and white space after it never change the answer. */
#include <apr_strings.h>

#include "fuzz.h"
#include "jr_topic.h"

static int same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_root();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    const char *topic = fuzz_cstr(p, data, size);
    const char *pos = jr_topic_position(topic);

    FUZZ_CHECK(!pos || !strcmp(pos, "first") || !strcmp(pos, "middle") || !strcmp(pos, "last"));
    FUZZ_CHECK(same(pos, jr_topic_position(apr_pstrcat(p, "Topic ", topic, NULL))));
    FUZZ_CHECK(same(pos, jr_topic_position(apr_pstrcat(p, topic, " \t", NULL))));
    apr_pool_destroy(p);
    return 0;
}
