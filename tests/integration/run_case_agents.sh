#!/bin/sh
# SPDX-License-Identifier: MIT
# run_case_agents.sh - examples/run-case.sh, the CI mount script, with
# agents that end at once: it goes on as soon as the agent ends and says
# how it ended (exit 0 only when every step and the agent did), and an
# agent past LEDGERFS_AGENT_TIMEOUT is stopped and reported.
. "$(dirname "$0")/lib.sh"
lf_setup
command -v bwrap >/dev/null || lf_skip_all "bubblewrap is not installed"

# agent EXIT SLEEP: registers, sleeps SLEEP seconds, exits EXIT.
cat >"$work/agent" <<'A'
#!/bin/sh
printf '{"case_id":"%s","token":"%s"}\n' "$LEDGERFS_CASE" "$LEDGERFS_TOKEN" >/mediator/register
sleep "$AGENT_SLEEP"
exit "$AGENT_EXIT"
A
chmod 0755 "$work/agent"

# run_case NAME EXIT SLEEP TIMEOUT: the script's exit status, its output
# in $work/NAME.out.  The outer bound is well under TIMEOUT + 60.
run_case() {
	AGENT_EXIT=$2 AGENT_SLEEP=$3 LEDGERFS_AGENT_TIMEOUT=$4 \
		LEDGERFS_CASE_NAME=$1 LEDGERFS_ARTIFACTS="$work/art/$1" \
		LEDGERFS_BUILD="$top_builddir" \
		timeout "$(($4 + 30))" sh "$top_srcdir/examples/run-case.sh" \
		"$work/agent" >"$work/$1.out" 2>&1
}

rule_begin an_agent_that_ends_at_once_is_not_waited_for
# Stuck until the agent timeout, the outer timeout would stop it first.
run_case quick 0 0 100
rule_eq "exit" 0 "$?"
rule_has "output" "$(cat "$work/quick.out")" "run-case: ok"
rule_hasnt "output" "$(cat "$work/quick.out")" "ran past"
rule_end

rule_begin an_agent_that_fails_is_reported_with_its_exit_status
run_case fails 5 0 100
rule_eq "exit" 1 "$?"
rule_has "output" "$(cat "$work/fails.out")" "run-case: the agent exited 5"
rule_end

rule_begin an_agent_past_its_timeout_is_stopped
run_case slow 0 60 2
rule_eq "exit" 1 "$?"
rule_has "output" "$(cat "$work/slow.out")" "the agent ran past 2 s and was stopped"
rule_end

rule_begin a_timeout_that_is_not_whole_seconds_is_refused
out=$(LEDGERFS_AGENT_TIMEOUT=1.5 LEDGERFS_BUILD="$top_builddir" \
	LEDGERFS_ARTIFACTS="$work/art/bad" timeout 30 \
	sh "$top_srcdir/examples/run-case.sh" "$work/agent" 2>&1)
rule_eq "exit" 2 "$?"
rule_has "says" "$out" "LEDGERFS_AGENT_TIMEOUT: whole seconds"
rule_end

lf_finish
