#!/bin/sh
# SPDX-License-Identifier: MIT
# cassette_folder_links.sh - a NAME.json in a cassette folder that is a
# symbolic link or a folder is no recording (ledgerfs-policy(5) CASSETTE
# FILES): a call whose policy mock needs it is refused with ASSERT's own
# reason (its CassettePathError, HTTP 400 there, EINVAL here), as is a
# mocks rule that names it; the regular recordings beside them replay.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start

cas=$work/cas
mkdir "$cas" "$cas/sub.json"
echo '{"status":"ok"}' >"$cas/real.json"
ln -s real.json "$cas/link.json"
printf 'interactions:\n  - {match: "*", mode: mock}\n' >"$work/p.yaml"
printf 'version: 1\ncassette_dir: cas\nmocks: []\n' >"$work/m.yaml"
ctl() { timeout 60 "$LEDGERCTL" --mount "$mnt" "$@"; }
ctl open L --policy "$work/p.yaml" --mocks "$work/m.yaml" >/dev/null ||
	rule_fail "open"
lf_register L

rule_begin a_policy_mock_whose_recording_is_a_link_is_refused_with_asserts_reason
out=$(lf_write L request '{"call_id":"l1","tool":"link","args":{}}\n')
rule_has write "$out" "write=EINVAL"
rule_eq error "EINVAL request: cassette 'link.json' is a symlink; replay cassettes must be regular files" \
	"$(cat "$(lf_tdir L)/error")"
rule_eq "refused row" 1 "$(lf_rows L '"phase":"refused"')"
rule_end

rule_begin a_policy_mock_whose_recording_is_a_folder_is_refused_with_asserts_reason
out=$(lf_write L request '{"call_id":"s1","tool":"sub","args":{}}\n')
rule_has write "$out" "write=EINVAL"
rule_eq error "EINVAL request: cassette is not a regular file: sub.json" \
	"$(cat "$(lf_tdir L)/error")"
rule_end

rule_begin the_regular_recording_beside_them_replays
rule_has reply "$(lf_call L r1 real)" '"returned":{"status":"ok"}'
rule_has "no recording: the placeholder" "$(lf_call L o1 other)" 'placeholder'
rule_end

rule_begin a_mocks_rule_naming_a_link_is_refused_at_load
printf 'version: 1\ncassette_dir: cas\nmocks:\n  - {tool: get, cassette_file: link}\n' >"$work/m2.yaml"
out=$("$LEDGERCTL" validate "$work/p.yaml" "$work/m2.yaml" 2>&1)
rule_eq exit 1 "$?"
rule_has says "$out" "mocks[0]: cassette 'link.json' is a symlink; replay cassettes must be regular files"
rule_end

lf_finish
