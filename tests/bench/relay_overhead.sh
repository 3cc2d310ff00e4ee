#!/bin/sh
# SPDX-License-Identifier: MIT
# relay_overhead.sh - run by hand from a build folder (run_bench.sh runs
# it as its `paths` part): the p50 overhead of a call through
# ledgerfs-relay, and through ledgerfs-mcp when it is built, over the same
# call made directly on the case's files, and of a call the host runs
# (ledgerfs(8) HOST EXECUTORS, /bin/cat as the executor) over a direct
# call and its result, on a real mount (N calls each, default 1000).
#   cd build/plain && sh ../../tests/bench/relay_overhead.sh [N]
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$(pwd)}
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/relay_lib.sh"
relay_require
lf_setup
lf_start
lf_open_reg C
lf_open_reg H "interactions:
  - match: lookup_b
    mode: pass
    exec: {argv: [/bin/cat]}
default: {mode: block}
" ""
relay_start C
rc=0
HOST_DIR=$(lf_tdir H) python3 "$top_srcdir/tests/bench/relay_overhead.py" "$(lf_tdir C)" \
	"$relay_url" "$RELAY_TOKEN" C "${1:-1000}" \
	$([ -x "$top_builddir/ledgerfs-mcp" ] && echo "$top_builddir/ledgerfs-mcp") ||
	rc=$?
relay_stop
lf_stop
exit $rc
