# SPDX-License-Identifier: MIT
"""Unit tests of examples/python/ledgerfs_client.py and the
function-calling loop, against a real mount prepared by
python_client.sh.  Environment: LF_EXAMPLES (examples/python), LF_DIR
(an open case's target folder, registered here), LEDGERFS_CASE,
LEDGERFS_TOKEN, LF_LEDGER (its backing ledger), LF_UNREG_DIR (a case
nobody registers), LF_CLOSED_DIR (a closed case's target folder).
Test names are the rules.
"""
import errno
import json
import os
import sys
import threading
import unittest

sys.path.insert(0, os.environ["LF_EXAMPLES"])
import function_calling_loop as loop  # noqa: E402
from ledgerfs_client import Client, LedgerfsError  # noqa: E402


def rows(**match):
    """Ledger rows whose keys equal every given value."""
    with open(os.environ["LF_LEDGER"]) as f:
        out = [json.loads(line) for line in f]
    return [r for r in out if all(r.get(k) == v for k, v in match.items())]


class ClientTest(unittest.TestCase):
    lf = Client(os.environ.get("LF_DIR"))

    @classmethod
    def setUpClass(cls):
        cls.lf.register()

    def test_a_correct_repeat_registration_is_accepted_with_no_row(self):
        self.lf.register()
        self.assertEqual(len(rows(phase="registered")), 1)

    def test_a_call_before_registration_raises_eacces(self):
        with self.assertRaises(LedgerfsError) as cm:
            Client(os.environ["LF_UNREG_DIR"]).call("lookup_a", {})
        self.assertEqual(cm.exception.errno, errno.EACCES)
        self.assertEqual(cm.exception.errno_name, "EACCES")
        self.assertIn("not registered", cm.exception.reason)

    def test_a_wrong_token_raises_eacces_with_the_reason(self):
        with self.assertRaises(LedgerfsError) as cm:
            Client(os.environ["LF_UNREG_DIR"]).register("U", "0" * 64)
        self.assertEqual(cm.exception.errno, errno.EACCES)
        self.assertIn("wrong token", cm.exception.reason)

    def test_a_passed_call_returns_pass_and_its_result_is_recorded(self):
        d = self.lf.call("lookup_a", {"id": 7}, call_id="p1")
        self.assertTrue(d.passed)
        self.assertEqual((d.mode, d.call_id), ("pass", "p1"))
        self.lf.result("p1", {"name": "Ada"})
        done = rows(call_id="p1", phase="completion")
        self.assertEqual(done[0]["returned"], {"name": "Ada"})
        self.assertIs(done[0]["real_executed"], True)

    def test_a_mocked_call_returns_the_host_result(self):
        d = self.lf.call("send_a", {"to": "x"}, call_id="m1")
        self.assertFalse(d.passed)
        self.assertEqual((d.mode, d.returned), ("mock", {"status": "sent"}))

    def test_a_blocked_call_is_a_decision_not_an_exception(self):
        d = self.lf.call("delete_a", call_id="b1")
        self.assertEqual(d.mode, "block")
        self.assertTrue(d.is_error)
        self.assertIn("blocked by mediation policy", d.reason)

    def test_a_duplicate_call_id_raises_eexist(self):
        self.lf.call("lookup_a", call_id="dup")
        with self.assertRaises(LedgerfsError) as cm:
            self.lf.call("lookup_a", call_id="dup")
        self.assertEqual(cm.exception.errno, errno.EEXIST)
        self.assertIn("duplicate call id 'dup'", cm.exception.reason)

    def test_a_result_for_a_mocked_call_raises_einval(self):
        self.lf.call("send_a", call_id="m2")
        with self.assertRaises(LedgerfsError) as cm:
            self.lf.result("m2", {})
        self.assertEqual(cm.exception.errno, errno.EINVAL)

    def test_a_result_for_an_unknown_call_raises_enoent(self):
        with self.assertRaises(LedgerfsError) as cm:
            self.lf.result("nosuch", {})
        self.assertEqual(cm.exception.errno, errno.ENOENT)

    def test_args_that_are_not_an_object_raise_before_sending(self):
        with self.assertRaises(TypeError):
            self.lf.call("lookup_a", [1, 2])

    def test_a_closed_case_raises_epipe(self):
        closed = Client(os.environ["LF_CLOSED_DIR"])
        with self.assertRaises(LedgerfsError) as cm:
            closed.call("lookup_a")
        self.assertEqual(cm.exception.errno, errno.EPIPE)

    def test_unreachable_case_files_raise_ledgerfs_error(self):
        with self.assertRaises(LedgerfsError) as cm:
            Client("/nonexistent/mediator").call("lookup_a")
        self.assertEqual(cm.exception.errno, errno.ENOENT)

    def test_generated_call_ids_are_unique_across_threads(self):
        ids, lock = [], threading.Lock()

        def one():
            d = self.lf.call("lookup_b")
            with lock:
                ids.append(d.call_id)

        threads = [threading.Thread(target=one) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(len(set(ids)), 8)

    def test_a_refusal_never_carries_another_errnos_reason(self):
        # Two kinds of refusal at once on one case: the error file is the
        # case's, so a reason read after a refusal may be another's.
        big = {"x": "y" * (1100 * 1024)}
        out = []

        def one(i):
            try:
                if i % 2:
                    self.lf.call("send_a", big)
                else:
                    self.lf.call("send_a", {"x": "a\u0000b"})
            except LedgerfsError as e:
                out.append(e)

        ts = [threading.Thread(target=one, args=(i,)) for i in range(40)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(len(out), 40)
        for e in out:
            self.assertIn(e.errno, (errno.EFBIG, errno.EINVAL))
            if e.reason:
                self.assertTrue(e.reason.startswith(e.errno_name + " "),
                                (e.errno_name, e.reason))

    def test_tools_reads_the_target_tools_file(self):
        self.assertEqual(self.lf.tools(), {"tools": [
            {"name": "resume_line", "inputSchema": {"type": "object"}}]})


class LoopTest(unittest.TestCase):
    def test_the_loop_routes_every_tool_call_through_ledgerfs(self):
        lf = Client(os.environ["LF_DIR"])
        tools_seen = []

        def model(messages, tools):
            tools_seen.append(tools)
            return script(messages, tools)

        script = loop.ScriptedModel([
            {"role": "assistant", "tool_calls": [
                loop.tool_call("call_l1", "lookup_customer", {"id": 42}),
                loop.tool_call("call_s1", "send_email", {"to": "a@b"})]},
            {"role": "assistant", "tool_calls": [
                loop.tool_call("call_d1", "delete_account", {"id": 42})]},
            {"role": "assistant", "content": "finished"},
        ])
        msgs = loop.run(model, lf, loop.DEMO_TOOLS, "go")
        answers = {m["tool_call_id"]: json.loads(m["content"])
                   for m in msgs if m["role"] == "tool"}
        self.assertEqual(answers["call_l1"], {"id": 42, "name": "Ada"})
        self.assertEqual(answers["call_s1"], {"status": "sent"})
        self.assertIn("blocked by mediation policy", answers["call_d1"]["error"])
        self.assertEqual(msgs[-1]["content"], "finished")
        self.assertEqual(tools_seen[0], [{"type": "function", "function": {
            "name": "resume_line", "description": "",
            "parameters": {"type": "object"}}}])
        for cid, mode in (("call_l1", "pass"), ("call_s1", "mock"),
                          ("call_d1", "block")):
            self.assertEqual(rows(call_id=cid, phase="decision")[0]["mode"],
                             mode)
        self.assertEqual(rows(call_id="call_l1", phase="completion")[0]
                         ["returned"], {"id": 42, "name": "Ada"})


if __name__ == "__main__":
    unittest.main(verbosity=2)
