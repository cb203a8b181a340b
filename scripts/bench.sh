#!/bin/sh
# make bench: see bench/bench.py. BENCH_ROUNDS, BENCH_DURATION, BENCH_CONNECTIONS tune it.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
exec /usr/bin/python3 bench/bench.py
