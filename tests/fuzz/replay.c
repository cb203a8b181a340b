/* Runs a fuzz target once over each file named on the command line (directories: each
 * regular file inside, sorted), without libFuzzer: make check replays the committed corpora
 * this way with the project's compiler and the sanitizers. Prints the count of inputs. */
#include <dirent.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n = -1;
    int ok = 0;

    /* Exactly n bytes, as libFuzzer hands them over: ASan sees any read past the end. */
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc(n ? (size_t)n : 1)) != NULL && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        LLVMFuzzerTestOneInput(buf, (size_t)n);
        ok = 1;
    }
    if (!ok) {
        fprintf(stderr, "replay: cannot read %s\n", path);
    }
    free(buf);
    if (f) {
        fclose(f);
    }
    return ok;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* Returns the number of inputs run, -1 when one could not be read. */
static long run_path(const char *path)
{
    struct stat st;
    struct dirent **names = NULL;
    long count = 0;
    int n, i;

    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: cannot stat %s\n", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        return run_file(path) ? 1 : -1;
    }
    if ((n = scandir(path, &names, NULL, by_name)) < 0) {
        fprintf(stderr, "replay: cannot list %s\n", path);
        return -1;
    }
    for (i = 0; i < n; ++i) {
        char child[4096];
        if (names[i]->d_name[0] != '.' && count >= 0 &&
            snprintf(child, sizeof(child), "%s/%s", path, names[i]->d_name) < (int)sizeof(child) &&
            stat(child, &st) == 0 && S_ISREG(st.st_mode)) {
            count = run_file(child) ? count + 1 : -1;
        }
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv)
{
    long total = 0;
    int i;

    LLVMFuzzerInitialize(&argc, &argv);
    for (i = 1; i < argc; ++i) {
        long n = run_path(argv[i]);
        if (n < 0) {
            return EXIT_FAILURE;
        }
        total += n;
    }
    printf("%s: %ld inputs replayed\n", argv[0], total);
    return total > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
