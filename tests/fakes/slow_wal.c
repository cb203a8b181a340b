/* LD_PRELOAD shim for the worker tests: every write to a SQLite "-wal" file returns 300 ms
 * late. A commit then becomes visible well after its last write to the -wal file (the write
 * that wakes an idle worker through inotify): what a writer descheduled at that moment does
 * on a loaded machine. Built by the test that uses it (tests/api/test_worker_claims.py). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define LATE_US 300000

static int is_wal(int fd)
{
    char link[64], path[4096];
    ssize_t n;
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = readlink(link, path, sizeof(path) - 1);
    if (n < 4) {
        return 0;
    }
    path[n] = '\0';
    return strcmp(path + n - 4, "-wal") == 0;
}

typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);

static ssize_t late(const char *name, int fd, const void *buf, size_t len, off_t off)
{
    pwrite_fn real = (pwrite_fn)dlsym(RTLD_NEXT, name);
    ssize_t r = real(fd, buf, len, off);
    if (is_wal(fd)) {
        usleep(LATE_US);
    }
    return r;
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
    return late("pwrite", fd, buf, len, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
    return late("pwrite64", fd, buf, len, off);
}
