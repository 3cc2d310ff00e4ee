#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Claude Code PostToolUse (and PostToolUseFailure) hook: reports the
result of a call ledgerfs passed.

Only passed calls run, so every call this hook sees was passed by
pretooluse.py under the same tool_use_id; the result written is Claude
Code's tool_response (or, after a failure, {"error": ...} with is_error
true).  A result the case refuses is said on stderr and in the exit
status (Claude Code shows it; it cannot undo a call that already ran).

Environment as pretooluse.py.
"""
import json
import os
import subprocess
import sys

INPUT_MAX = 8 * 1024 * 1024


def main():
    try:
        hook = json.loads(sys.stdin.buffer.read(INPUT_MAX))
        call_id = hook["tool_use_id"]
        failed = hook.get("hook_event_name") == "PostToolUseFailure"
        if failed:
            returned = {"error": hook.get("error")}
        else:
            returned = hook.get("tool_response")
        cmd = [os.environ.get("LEDGERCALL", "ledgercall"),
               "--dir", os.environ.get("LEDGERFS_DIR") or "/mediator",
               "result", "--call-id", call_id,
               "--returned", "-"]
        if failed:
            cmd.append("--error")
        # The result goes on standard input: a word holds at most 128 KiB.
        run = subprocess.run(cmd, capture_output=True, text=True,
                             input=json.dumps(returned),
                             timeout=float(os.environ.get(
                                 "LEDGERFS_HOOK_TIMEOUT", "50")))
        if run.returncode != 0:
            sys.stderr.write("ledgerfs: result not recorded: %s\n"
                             % run.stderr.strip())
            return 1
    except Exception as e:
        sys.stderr.write("ledgerfs: result not recorded: %s: %s\n"
                         % (type(e).__name__, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
