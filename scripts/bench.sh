#!/bin/bash
# SPDX-License-Identifier: MIT
# bench.sh - the benchmark on a fresh Debian machine, as root: installs
# and builds what it needs (scripts/dev.sh), then runs `make bench`, which
# prints each performance goal as a ratio of figures from the same run
# (README, Performance).  Sizes and parts come from the environment:
#   sudo BENCH_QUICK=1 scripts/bench.sh                  every part, small
#   sudo BENCH_PARTS=calls BENCH_CS="1 64" scripts/bench.sh
exec "$(dirname "$0")/dev.sh" bench
