#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An OpenAI-style function-calling loop whose every tool call goes
through ledgerfs (ledgerfs_client.py beside it).

The model sees the case's tools (target/tools, turned into the
`tools=[{"type": "function", ...}]` shape of the Chat Completions API);
each `tool_calls` entry is sent to the host with the model's call id as
the ledger's call id; a passed call runs the local implementation and
reports its result, a mocked or host-run one answers with the host's
result, a blocked one answers with the refusal.  Every answer goes back
to the model as a `{"role": "tool", ...}` message.

Run as a demo, a scripted model stands in for a real one (no network),
on a case opened with the shipped examples/policy.yaml (lookup_customer
passes, send_message is mocked, delete_account is blocked by default):

    LEDGERFS_DIR=/mediator python3 function_calling_loop.py

A real model plugs in as any callable(messages, tools) -> assistant
message dict, for example a thin wrapper over an OpenAI client.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ledgerfs_client import Client, LedgerfsError  # noqa: E402


def openai_tools(case_tools):
    """target/tools (MCP's tools/list shape) -> the Chat Completions
    `tools` parameter."""
    return [{"type": "function",
             "function": {"name": t["name"],
                          "description": t.get("description", ""),
                          "parameters": t.get("inputSchema",
                                              {"type": "object"})}}
            for t in case_tools.get("tools", [])]


def run_tool_call(lf, implementations, tc):
    """One tool call through ledgerfs; returns the tool message content."""
    name = tc["function"]["name"]
    try:
        args = json.loads(tc["function"].get("arguments") or "{}")
        decision = lf.call(name, args, call_id=tc["id"])
    except (ValueError, TypeError) as e:
        return json.dumps({"error": "bad arguments: %s" % e})
    except LedgerfsError as e:
        return json.dumps({"error": str(e)})
    if decision.mode == "block":
        return json.dumps({"error": decision.reason,
                           "returned": decision.returned})
    if not decision.passed:  # mock, or the host ran it
        return json.dumps(decision.returned)
    impl = implementations.get(name)
    if impl is None:
        value, is_error = {"error": "no implementation of %s" % name}, True
    else:
        try:
            value, is_error = impl(**args), False
        except Exception as e:  # the tool failed: report that too
            value, is_error = {"error": str(e)}, True
    lf.result(decision.call_id, value, is_error=is_error,
              real_executed=impl is not None)
    return json.dumps(value)


def run(model, lf, implementations, user_prompt, max_turns=10):
    """The loop: ask the model, route its tool calls, until it answers."""
    tools = openai_tools(lf.tools())
    messages = [{"role": "user", "content": user_prompt}]
    for _ in range(max_turns):
        msg = model(messages, tools)
        messages.append(msg)
        calls = msg.get("tool_calls") or []
        if not calls:
            return messages
        for tc in calls:
            messages.append({"role": "tool", "tool_call_id": tc["id"],
                             "content": run_tool_call(lf, implementations,
                                                      tc)})
    return messages


class ScriptedModel:
    """A stand-in model: replays assistant messages in order."""

    def __init__(self, script):
        self.script = list(script)

    def __call__(self, messages, tools):
        if not self.script:
            return {"role": "assistant", "content": "done"}
        return self.script.pop(0)


def tool_call(call_id, name, args):
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}


def demo_model():
    return ScriptedModel([
        {"role": "assistant", "content": None, "tool_calls": [
            tool_call("call_lookup_1", "lookup_customer", {"id": 42}),
            tool_call("call_send_1", "send_message",
                      {"to": "ada@example.com", "text": "Your line is back."}),
        ]},
        {"role": "assistant", "content": None, "tool_calls": [
            tool_call("call_delete_1", "delete_account", {"id": 42}),
        ]},
        {"role": "assistant", "content": "Ada was messaged; the account "
                                         "was not deleted."},
    ])


DEMO_TOOLS = {"lookup_customer": lambda id: {"id": id, "name": "Ada"}}


def main():
    lf = Client()
    if os.environ.get("LEDGERFS_CASE") and os.environ.get("LEDGERFS_TOKEN"):
        lf.register()
    messages = run(demo_model(), lf, DEMO_TOOLS,
                   "Message customer 42, then close their account.")
    json.dump(messages, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
