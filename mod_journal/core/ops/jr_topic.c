#include <ctype.h>
#include <string.h>

#include "jr_topic.h"

/* Compares two decimal digit runs by value: <0, 0, >0. Leading zeros do not count. */
static int cmp_digits(const char *a, size_t na, const char *b, size_t nb)
{
    while (na > 0 && *a == '0') {
        ++a;
        --na;
    }
    while (nb > 0 && *b == '0') {
        ++b;
        --nb;
    }
    if (na != nb) {
        return na < nb ? -1 : 1;
    }
    return na ? memcmp(a, b, na) : 0;
}

static int is_zero(const char *s, size_t n)
{
    return cmp_digits(s, n, "0", 1) == 0;
}

const char *jr_topic_position(const char *topic)
{
    const char *end, *m, *n, *slash;
    size_t mlen, nlen;

    if (!topic) {
        return NULL;
    }
    end = topic + strlen(topic);
    while (end > topic && isspace((unsigned char)end[-1])) {
        --end;
    }
    /* M: the digits at the very end. */
    for (m = end; m > topic && isdigit((unsigned char)m[-1]); --m) {
    }
    mlen = (size_t)(end - m);
    slash = m;
    while (slash > topic && slash[-1] == ' ') {
        --slash;
    }
    if (mlen == 0 || slash == topic || slash[-1] != '/') {
        return NULL;
    }
    /* N: the digits before the slash. */
    n = slash - 1;
    while (n > topic && n[-1] == ' ') {
        --n;
    }
    for (nlen = 0; n > topic && isdigit((unsigned char)n[-1]); --n, ++nlen) {
    }
    if (nlen == 0) {
        return NULL;
    }
    /* A fraction glued to other digits or letters ("v2.3/4") is still read as 3/4: only
     * the digit runs matter. */
    if (is_zero(m, mlen) || is_zero(n, nlen) || cmp_digits(n, nlen, m, mlen) > 0) {
        return NULL;
    }
    if (cmp_digits(n, nlen, m, mlen) == 0) {
        return "last";
    }
    return cmp_digits(n, nlen, "1", 1) == 0 ? "first" : "middle";
}
