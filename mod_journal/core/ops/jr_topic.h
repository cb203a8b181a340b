/* The position of a lesson within its module, read from a topic that ends with "N/M". */
#ifndef JR_TOPIC_H
#define JR_TOPIC_H

/* "last" when N = M (checked first, so 1/1 is last), "first" when N = 1, "middle" otherwise;
 * NULL when the topic is empty, does not end with N/M, or N/M is invalid (M = 0, N = 0,
 * N > M). Spaces around the slash and after the fraction are allowed; numbers of any
 * length are compared exactly (leading zeros ignored). */
const char *jr_topic_position(const char *topic);

#endif
