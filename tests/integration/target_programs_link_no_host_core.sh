#!/bin/sh
# SPDX-License-Identifier: MIT
# target_programs_link_no_host_core.sh - what runs inside the sandbox
# (ledgercall, ledgerfs-mcp) shares lfclient and never links the host
# core: no core module's symbol is defined in them, ledgercall needs libc
# alone, ledgerfs-mcp libc and jansson (sanitizer runtimes aside).  The
# one grammar of durations and sizes (units.c, with err.c's reasons) is
# shared by every program and allowed in ledgerfs-mcp (--init-timeout).
: "${top_builddir:=$(pwd)}"
command -v nm >/dev/null || { echo "SKIP: nm missing"; exit 77; }
failed=0
core='^(case|ledger|policy|mocks|chain|request|doc|docshare|decision|evidence|transcript|registry|commit|backing|seal|tools|units|cassette|lf_fail|lf_err)_?'
for prog in ledgercall ledgerfs-mcp; do
	bin=$top_builddir/$prog
	[ -x "$bin" ] || { echo "SKIP: $prog not built"; exit 77; }
	shared='^lfc_'
	[ "$prog" = ledgerfs-mcp ] && shared='^(lfc_|units_(duration_ms|size)$|lf_fail$|lf_err_name$)'
	core_syms=$(nm -g --defined-only "$bin" | awk '{print $3}' | grep -E "$core" | grep -vE "$shared")
	if [ -z "$core_syms" ]; then
		echo "ok - ${prog}_defines_no_host_core_symbol"
	else
		echo "not ok - ${prog}_defines_no_host_core_symbol: $core_syms" | head -c 600
		failed=1
	fi
	if nm -g --defined-only "$bin" | grep -q ' T lfc_request$'; then
		echo "ok - ${prog}_uses_the_shared_lfclient"
	else
		echo "not ok - ${prog}_uses_the_shared_lfclient"
		failed=1
	fi
done
# Undefined symbols by library: only libc (and jansson for the server).
libs=$(nm -D -u "$top_builddir/ledgercall" | sed -n 's/.*@\([A-Za-z_]*\).*/\1/p' | sort -u | grep -v '^GLIBC' | tr '\n' ' ')
if [ -z "$libs" ]; then
	echo "ok - ledgercall_needs_libc_alone"
else
	echo "not ok - ledgercall_needs_libc_alone: $libs"
	failed=1
fi
libs=$(nm -D -u "$top_builddir/ledgerfs-mcp" | grep -v '__asan\|__ubsan\|__lsan\|__sanitizer' | sed -n 's/.*@\([A-Za-z_.0-9]*\).*/\1/p' | grep -v '^GLIBC' | grep -v '^libjansson' | sort -u | tr '\n' ' ')
if [ -z "$libs" ]; then
	echo "ok - ledgerfs_mcp_needs_libc_and_jansson_alone"
else
	echo "not ok - ledgerfs_mcp_needs_libc_and_jansson_alone: $libs"
	failed=1
fi
exit $failed
