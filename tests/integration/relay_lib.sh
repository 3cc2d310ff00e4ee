# SPDX-License-Identifier: MIT
# relay_lib.sh - starting ledgerfs-relay beside a real mount for the
# relay_*.sh tests: a free loopback port, the relay in the background
# (stopped by lib.sh's clean-up), waiting until /health answers.
# Sourced after lib.sh.

RELAY=$top_builddir/ledgerfs-relay

# No request of a test waits more than 30 s.
curl() { command curl --max-time 30 "$@"; }
RELAY_TOKEN=relay-test-token-0123456789

relay_require() {
	[ -x "$RELAY" ] || lf_skip_all "$RELAY not built"
	command -v curl >/dev/null || lf_skip_all "curl missing"
	command -v jq >/dev/null || lf_skip_all "jq missing"
}

relay_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# relay_start C [RELAY OPTIONS...]: the relay for case C's target folder
# on 127.0.0.1:$relay_port; LEDGERFS_CASE and LEDGERFS_TOKEN as a
# harness sets them.  relay_wrap: a command to run it under (strace).
relay_start() {
	_c=$1
	shift
	relay_port=$(relay_free_port)
	relay_url=http://127.0.0.1:$relay_port
	LEDGERFS_RELAY_TOKEN=$RELAY_TOKEN LEDGERFS_CASE=$_c \
		LEDGERFS_TOKEN=$(lf_token "$_c") \
		${relay_wrap:-} "$RELAY" --listen="127.0.0.1:$relay_port" \
		--dir "$(lf_tdir "$_c")" \
		"$@" >>"$work/relay.out" 2>>"$work/relay.err" &
	relay_pid=$!
	lf_bg_pids="$lf_bg_pids $relay_pid"
	_i=0
	until curl -s -o /dev/null "$relay_url/health"; do
		_i=$((_i + 1))
		if [ $_i -gt 100 ] || ! kill -0 "$relay_pid" 2>/dev/null; then
			echo "# ledgerfs-relay did not start:" >&2
			sed 's/^/# /' "$work/relay.err" >&2
			exit 99
		fi
		sleep 0.05
	done
}

# relay_stop: TERM; the relay's exit status, 124 when it had to be killed.
relay_stop() {
	kill -TERM "$relay_pid" 2>/dev/null
	_i=0
	while kill -0 "$relay_pid" 2>/dev/null && [ $_i -lt 200 ]; do
		sleep 0.05
		_i=$((_i + 1))
	done
	if kill -0 "$relay_pid" 2>/dev/null; then
		kill -9 "$relay_pid"
		wait "$relay_pid" 2>/dev/null
		return 124
	fi
	wait "$relay_pid"
}

# relay_post PATH BODY [CURL ARGS...]: prints "STATUS BODY".
relay_post() {
	_p=$1 _b=$2
	shift 2
	curl -s -o "$work/resp" -w '%{http_code}' -X POST \
		-H "Authorization: Bearer $RELAY_TOKEN" \
		-H 'Content-Type: application/json' --data-binary "$_b" \
		"$@" "$relay_url$_p" >"$work/code"
	printf '%s %s' "$(cat "$work/code")" "$(cat "$work/resp")"
}

# A sanitizer build of the relay must have reported nothing.
relay_check_sanitizer() {
	if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$work/relay.err" 2>/dev/null; then
		not_ok relay_has_no_sanitizer_report "$(grep -m3 -E 'ERROR:|runtime error:' "$work/relay.err" | tr '\n' ' ')"
	else
		ok relay_has_no_sanitizer_report
	fi
}
