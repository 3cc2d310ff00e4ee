#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Claude Code PreToolUse hook: every tool call goes through ledgerfs.

Reads Claude Code's hook input on stdin (tool_name, tool_input,
tool_use_id, session_id, ...), sends the call with `ledgercall`, Claude's
tool_use_id being the call id (so `ledgerctl transcript` can hold Claude's own
transcript against the ledger), and answers with Claude Code's hook
output:

  pass                 -> permissionDecision "allow"
  mock, host-executed  -> "deny", the reason carrying the host's result
  block                -> "deny", the reason carrying the host's reason

It fails closed: anything unexpected (no case files, ledgercall missing or
failing, malformed input, a timeout) is a "deny", never an "allow".

Environment: LEDGERFS_DIR (the case's target folder, default /mediator),
LEDGERCALL (default: ledgercall on PATH), LEDGERFS_HOOK_TIMEOUT (seconds
for the whole hook, registration and call together, default 50: keep it
under the hook's timeout in settings.json), and
LEDGERFS_CASE / LEDGERFS_TOKEN to register first when they are set.
"""
import json
import os
import subprocess
import sys
import time

INPUT_MAX = 8 * 1024 * 1024


def answer(decision, reason):
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                  "permissionDecision": decision,
                                  "permissionDecisionReason": reason}}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()


def ledgercall(args, timeout, stdin=""):
    cmd = [os.environ.get("LEDGERCALL", "ledgercall"),
           "--dir", os.environ.get("LEDGERFS_DIR") or "/mediator"] + args
    return subprocess.run(cmd, capture_output=True, text=True,
                          timeout=timeout, input=stdin)


def decide(raw):
    hook = json.loads(raw)
    name, args = hook.get("tool_name"), hook.get("tool_input", {})
    call_id = hook.get("tool_use_id")
    if not isinstance(name, str) or not name:
        return "deny", "ledgerfs: hook input without tool_name"
    if not isinstance(call_id, str) or not call_id:
        return "deny", "ledgerfs: hook input without tool_use_id"
    if not isinstance(args, dict):
        return "deny", "ledgerfs: tool_input is not an object"
    # One deadline for the whole hook, registration and call together.
    deadline = time.monotonic() + float(
        os.environ.get("LEDGERFS_HOOK_TIMEOUT", "50"))

    def left():
        t = deadline - time.monotonic()
        if t <= 0:
            raise subprocess.TimeoutExpired("ledgercall", 0)
        return t
    if os.environ.get("LEDGERFS_CASE") and os.environ.get("LEDGERFS_TOKEN"):
        # A repeat of a correct registration is accepted (ledgerfs(8)).
        reg = ledgercall(["register"], left())
        if reg.returncode != 0:
            return "deny", "ledgerfs: cannot register: " + reg.stderr.strip()
    # The arguments go on standard input: a word holds at most 128 KiB.
    run = ledgercall(["--tool", name, "--args", "-", "--call-id", call_id],
                     left(), stdin=json.dumps(args))
    if run.returncode not in (0, 3, 4):
        return "deny", ("ledgerfs: the call could not be mediated: "
                        + (run.stderr.strip() or "exit %d" % run.returncode))
    reply = json.loads(run.stdout)
    returned = json.dumps(reply.get("returned"))
    if reply.get("mode") == "pass" and \
            reply.get("result_source") == "host_executed":
        # ledgercall exits 3 for it: the host's result, as for mock.
        return "deny", ("ledgerfs: the host ran this tool; its result: "
                        + returned)
    if run.returncode == 0 and reply.get("mode") == "pass":
        return "allow", "ledgerfs: " + str(reply.get("reason", "passed"))
    if run.returncode == 3 and reply.get("mode") == "mock":
        return "deny", ("ledgerfs: the host answered this call instead of "
                        "running the tool; its result: " + returned)
    if run.returncode == 4 and reply.get("mode") == "block":
        return "deny", ("ledgerfs: %s; %s"
                        % (reply.get("reason", "blocked"), returned))
    return "deny", "ledgerfs: an unexpected reply: " + run.stdout.strip()


def main():
    try:
        raw = sys.stdin.buffer.read(INPUT_MAX + 1)
        if len(raw) > INPUT_MAX:
            decision, reason = "deny", "ledgerfs: hook input too large"
        else:
            decision, reason = decide(raw)
    except subprocess.TimeoutExpired:
        decision, reason = "deny", "ledgerfs: no decision in time"
    except Exception as e:  # fail closed, whatever went wrong
        decision, reason = "deny", "ledgerfs: %s: %s" % (type(e).__name__, e)
    answer(decision, reason)
    return 0


if __name__ == "__main__":
    sys.exit(main())
