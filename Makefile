# The project's driver (committed; autotools output lives in build directories).
#   make run    - install what is missing, build, run the journal on SQLite in the foreground
#   make check  - install what is missing, build, run every test
#   make bench  - every performance aim in one table, SQLite then PostgreSQL (bench/bench_aims.py)
#   make bench-hot - the hot paths beside a static file, offset vs cursor (bench/bench.py)
#   make bench-lists - the list pages of two builds side by side (BENCH_BUILDS)
#   make bench-worker - journal-worker: jobs per second, wake-up latency, memory
#   make bench-sse - event streams: 2,000 streams' memory, commit-to-client latency
#   make bench-photo - journal-worker: a 12-megapixel JPEG through the server-side enhancement
#   make bench-search - search at 200,000 entries: plain list, a match, no match, vs static
#   make bench-writes - POST /api/v1/entries at 2 and 16 connections (BENCH_BUILDS: A/B builds)
#   make bench-mixed - the mixed load at 200,000 entries and the httpd tree's memory (RSS, PSS)
#   make fuzz   - builds the fuzz targets with clang/libFuzzer and runs each for FUZZ_SECONDS
#   make build  - just build (./build)
#   make install - make build, then install it (DESTDIR, and the options given to configure by
#                 scripts/build.sh, apply)
#   make deb    - the Debian package libapache2-mod-journal in ./build-deb (out of tree)
#   make check-package - builds the package, installs it on this machine, serves the journal
#                 through the system's apache2 on a loopback port, then purges it

BUILD_DIR ?= build
ASAN_DIR  ?= build-asan
FUZZ_SECONDS ?= 60

.PHONY: all build build-asan run check unit api bench bench-hot bench-lists bench-worker bench-sse bench-photo bench-search bench-writes bench-mixed fuzz \
	deps clean distclean \
	install deb check-package

all: build

deps:
	@sh scripts/deps.sh

build: deps
	@sh scripts/build.sh $(BUILD_DIR)

build-asan: deps
	@sh scripts/build.sh $(ASAN_DIR) --enable-sanitizers

run: build
	@sh scripts/run.sh

check: deps
	@sh scripts/check.sh

bench: build
	@sh scripts/bench.sh

bench-hot: build
	@/usr/bin/python3 bench/bench.py

bench-lists: build
	@/usr/bin/python3 bench/bench_lists.py

bench-worker: build
	@/usr/bin/python3 bench/bench_worker.py

bench-sse: build
	@mkdir -p $(BUILD_DIR)/bench
	@$(CC) -std=c11 -O2 -Wall -Wextra -Wconversion -Werror -o $(BUILD_DIR)/bench/sse_client bench/sse_client.c
	@BENCH_CLIENT=$(BUILD_DIR)/bench/sse_client /usr/bin/python3 bench/bench_sse.py

bench-photo: build
	@/usr/bin/python3 bench/bench_photo.py

bench-search: build
	@/usr/bin/python3 bench/bench_search.py

bench-writes: build
	@/usr/bin/python3 bench/bench_writes.py

bench-mixed: build
	@/usr/bin/python3 bench/bench_mixed.py

fuzz:
	@sh scripts/deps.sh fuzz
	@FUZZ_SECONDS=$(FUZZ_SECONDS) sh scripts/fuzz.sh run

install: build
	@$(MAKE) -C $(BUILD_DIR) install --no-print-directory

deb:
	@sh scripts/deps.sh deb
	@sh scripts/deb.sh

check-package:
	@sh scripts/deps.sh deb
	@sh tests/package/check-package.sh

clean:
	@[ ! -f $(BUILD_DIR)/Makefile ] || $(MAKE) -C $(BUILD_DIR) clean
	@[ ! -f $(ASAN_DIR)/Makefile ] || $(MAKE) -C $(ASAN_DIR) clean

distclean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) build-fuzz build-deb autom4te.cache build-aux m4 aclocal.m4 configure \
		Makefile.in config.h.in config.h.in~
