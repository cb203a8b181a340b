#!/bin/sh
# The fuzz targets of tests/fuzz (one per hand-written parser).
#   fuzz.sh run          - builds them with clang and libFuzzer (ASan+UBSan) in build-fuzz and
#                          runs each for FUZZ_SECONDS (default 60), or FUZZ_RUNS executions
#                          when set; FUZZ_TARGETS narrows the list. Fails on any crash, leak
#                          or UB report; the input that caused it is left in build-fuzz/crashes.
#   fuzz.sh replay DIR   - builds them with the compiler and sanitizers of the configured
#                          build DIR (build-asan) around a plain main() and runs every corpus
#                          file through every target once, leak detection on. No clang needed.
# Both link the core as the autotools build compiled it (DIR/.libs/libjrcore.a) with that
# build's include and library flags.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
fuzzdir="$top/tests/fuzz"
TARGETS=${FUZZ_TARGETS:-"multipart url route json time topic settings"}
# Halt on the first UB report, with a stack; ASan's own options come from the caller too.
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export UBSAN_OPTIONS

# A variable of a configured build directory's Makefile.
mkvar() {
    make -s -C "$1" --no-print-directory --eval 'print-var-%: ; @echo $($*)' "print-var-$2"
}

# Compiles target $2 (+ extra sources) against the core of build dir $1 into $1/fuzz/$2.
link_target() {
    bdir=$1 name=$2 extra_flags=$3
    shift 3
    mkdir -p "$bdir/fuzz"
    # shellcheck disable=SC2046,SC2086
    (cd "$bdir" && $(mkvar . CC) -g -O1 $extra_flags $(mkvar . CORE_CPPFLAGS) -I"$fuzzdir" \
        "$fuzzdir/fuzz_$name.c" "$@" .libs/libjrcore.a $(mkvar . CORE_LIBS) -o "fuzz/$name")
}

# Checks that every field table of the core is listed in jr_field_catalogue: a resource file
# with tables exports them in a jr_fields_* list, and jr_fields.c names that list.
check_catalogue() {
    rc=0
    for f in "$top"/mod_journal/core/*.c "$top"/mod_journal/core/ops/*.c; do
        tables=$(sed -n 's/^static const jr_field_t \([a-z_]*\)\[\].*/\1/p' "$f")
        [ -n "$tables" ] || continue
        list=$(sed -n 's/^const jr_field_spec_t \(jr_fields_[a-z_]*\)\[\].*/\1/p' "$f")
        exported=$(sed -n '/^const jr_field_spec_t jr_fields_/,/^};/p' "$f")
        if [ -z "$list" ] || ! grep -qw "$list" "$top/mod_journal/core/jr_fields.c"; then
            echo "fuzz: $(basename "$f") has field tables but no jr_fields_* list in jr_field_catalogue" >&2
            rc=1
        fi
        for t in $tables; do
            if ! printf '%s\n' "$exported" | grep -qw "$t"; then
                echo "fuzz: $(basename "$f"): field table $t is not in its jr_fields_* list" >&2
                rc=1
            fi
        done
    done
    return $rc
}

configure_clang() {
    bdir=$1
    if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ] ||
       [ "$top/Makefile.am" -nt "$top/Makefile.in" ]; then
        (cd "$top" && autoreconf -fi >/dev/null 2>&1) || (cd "$top" && autoreconf -fi)
    fi
    mkdir -p "$bdir"
    if [ ! -f "$bdir/Makefile" ] || [ "$top/configure" -nt "$bdir/config.status" ]; then
        (cd "$bdir" && "$top/configure" --quiet --enable-sanitizers CC=clang \
            CFLAGS="-g -O1 -fsanitize=fuzzer-no-link")
    fi
    # The gcc builds hold the warnings-as-errors line; clang's extra warnings do not stop this one.
    nice make -C "$bdir" -j"$(nproc)" --no-print-directory -s JR_WARN= libjrcore.la
}

run() {
    bdir="$top/build-fuzz"
    seconds=${FUZZ_SECONDS:-60}
    failed=""
    command -v clang >/dev/null || { echo "fuzz: clang is missing: sh scripts/deps.sh fuzz" >&2; exit 1; }
    check_catalogue
    configure_clang "$bdir"
    for t in $TARGETS; do
        link_target "$bdir" "$t" "$(mkvar "$bdir" JR_SAN) -fsanitize=fuzzer"
    done
    # The multipart target writes each input to a file: memory-backed when there is one.
    if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
        TMPDIR=/dev/shm
        export TMPDIR
    fi
    for t in $TARGETS; do
        mkdir -p "$bdir/corpus/$t" "$bdir/crashes"
        limit="-max_total_time=$seconds"
        [ -z "${FUZZ_RUNS:-}" ] || limit="-runs=$FUZZ_RUNS"
        dict=""
        [ ! -f "$fuzzdir/$t.dict" ] || dict="-dict=$fuzzdir/$t.dict"
        echo "=== fuzz $t ($limit)"
        # New inputs go to build-fuzz/corpus/$t; the committed seeds are read, never written.
        # shellcheck disable=SC2086
        if ! nice "$bdir/fuzz/$t" $limit $dict -print_final_stats=1 -detect_leaks=1 \
            -artifact_prefix="$bdir/crashes/$t-" "$bdir/corpus/$t" "$fuzzdir/corpus/$t"; then
            failed="$failed $t"
        fi
    done
    if [ -n "$failed" ]; then
        echo "fuzz: crashes in:$failed (inputs in $bdir/crashes)" >&2
        exit 1
    fi
    echo "fuzz: no crash in: $TARGETS"
}

replay() {
    bdir=$(cd "${1:?usage: fuzz.sh replay BUILD_DIR}" && pwd)
    san=$(mkvar "$bdir" JR_SAN)
    case "$san" in *address*) ;; *) echo "fuzz: $bdir is not a sanitizer build" >&2; exit 1 ;; esac
    check_catalogue
    make -C "$bdir" --no-print-directory -s libjrcore.la
    for t in $TARGETS; do
        link_target "$bdir" "$t" "$(mkvar "$bdir" JR_WARN) $san" "$fuzzdir/replay.c"
    done
    for t in $TARGETS; do
        ASAN_OPTIONS=${ASAN_OPTIONS:-use_sigaltstack=0}:detect_leaks=${JOURNAL_FUZZ_LEAKS:-1} \
            "$bdir/fuzz/$t" "$fuzzdir"/corpus/*/ || return 1
    done
}

case "${1:-}" in
run) run ;;
replay) replay "${2:-}" ;;
*) echo "usage: fuzz.sh run | replay BUILD_DIR" >&2; exit 2 ;;
esac
