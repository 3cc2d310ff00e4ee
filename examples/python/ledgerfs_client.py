# SPDX-License-Identifier: MIT
"""ledgerfs_client - the target side of ledgerfs in Python (standard
library only): register, call, result, as ledgerfs(8) PROTOCOL describes.

    from ledgerfs_client import Client
    lf = Client()                      # $LEDGERFS_DIR, else /mediator
    lf.register()                      # from LEDGERFS_CASE / LEDGERFS_TOKEN
    d = lf.call("lookup_customer", {"id": 42})
    if d.passed:                       # run the real tool, report it
        lf.result(d.call_id, {"name": "Ada"})
    else:                              # mock, block, or run by the host
        print(d.returned)

Every refusal by the view (a write's errno, with the reason from the
case's `error` file) raises LedgerfsError; a block is a decision, not an
error.  A Client holds no open files: threads may share one.
"""
import errno as _errno
import itertools
import json
import os
import threading
import time

REPLY_MAX = 8 * 1024 * 1024

__all__ = ["Client", "Decision", "LedgerfsError"]


class LedgerfsError(OSError):
    """A write the case refused, or case files out of reach.

    errno is the write's errno (EACCES before registration, EINVAL for a
    malformed line, EEXIST for a duplicate call id, EPIPE once the case is
    closed, ...; see ledgerfs(8)); reason is the view's one-line reason,
    read from the case's error file after the refusal: "" when that file
    names another errno (another write of the case refused meanwhile).
    """

    def __init__(self, err, what, reason=""):
        self.reason = reason
        self.what = what
        msg = "%s: %s" % (what, os.strerror(err))
        if reason:
            msg += ": " + reason
        super().__init__(err, msg)

    @property
    def errno_name(self):
        return _errno.errorcode.get(self.errno, str(self.errno))


class Decision:
    """The host's reply to one call (the reply object of ledgerfs(8))."""

    def __init__(self, reply):
        self.reply = reply
        self.call_id = reply.get("call_id")
        self.mode = reply.get("mode")
        self.reason = reply.get("reason")
        self.returned = reply.get("returned")
        self.is_error = bool(reply.get("is_error"))

    @property
    def host_executed(self):
        """The host ran the tool: its result is in returned; run nothing."""
        return self.reply.get("result_source") == "host_executed"

    @property
    def passed(self):
        """The caller runs the real tool now and reports its result."""
        return self.mode == "pass" and not self.host_executed

    def __repr__(self):
        return "Decision(%r, %r)" % (self.mode, self.call_id)


class Client:
    _ids = itertools.count(1)
    _ids_lock = threading.Lock()

    def __init__(self, directory=None):
        self.dir = directory or os.environ.get("LEDGERFS_DIR") or "/mediator"

    # -- the files -----------------------------------------------------

    def reason(self):
        """Why the case's last refused write was refused ("" if none)."""
        try:
            with open(os.path.join(self.dir, "error"), "rb") as f:
                return f.read(4096).decode("utf-8", "replace").strip()
        except OSError:
            return ""

    def _fail(self, e, what):
        err = e.errno or _errno.EIO
        why = self.reason()
        # The error file is the case's: a reason naming another errno
        # is another write's, refused meanwhile; it is not this one's.
        name = _errno.errorcode.get(err)
        if name and not why.startswith(name + " "):
            why = ""
        return LedgerfsError(err, what, why)

    def _send(self, name, obj, read_reply=False):
        line = (json.dumps(obj, separators=(",", ":")) + "\n").encode()
        path = os.path.join(self.dir, name)
        try:
            fd = os.open(path, (os.O_RDWR if read_reply else os.O_WRONLY)
                         | os.O_CLOEXEC)
        except OSError as e:
            raise self._fail(e, name) from None
        reply = b""
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view):]
            # The same descriptor reads back the reply to its own call.
            while read_reply and not reply.endswith(b"\n"):
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                reply += chunk
                if len(reply) > REPLY_MAX:
                    raise LedgerfsError(_errno.EFBIG, name, "reply too large")
        except OSError as e:
            try:
                os.close(fd)
            except OSError:
                pass
            if isinstance(e, LedgerfsError):
                raise
            raise self._fail(e, name) from None
        try:
            # The view reports every refusal again at close.
            os.close(fd)
        except OSError as e:
            raise self._fail(e, name) from None
        return reply

    # -- the protocol --------------------------------------------------

    def register(self, case_id=None, token=None):
        """Register with the case (LEDGERFS_CASE / LEDGERFS_TOKEN by
        default).  A repeat of a correct registration is accepted."""
        case_id = case_id or os.environ.get("LEDGERFS_CASE")
        token = token or os.environ.get("LEDGERFS_TOKEN")
        if not case_id or not token:
            raise ValueError("register needs a case id and a token "
                             "(LEDGERFS_CASE, LEDGERFS_TOKEN)")
        self._send("register", {"case_id": case_id, "token": token})

    def new_call_id(self):
        with Client._ids_lock:
            n = next(Client._ids)
        return "py-%d-%d-%d" % (os.getpid(), time.time_ns(), n)

    def call(self, tool, args=None, call_id=None):
        """One tool call: returns the host's Decision once it is durable."""
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise TypeError("args must be a dict (a JSON object)")
        call_id = call_id or self.new_call_id()
        reply = self._send("request", {"call_id": call_id, "tool": tool,
                                       "args": args}, read_reply=True)
        if not reply:
            raise LedgerfsError(_errno.EPROTO, "request", "no reply")
        return Decision(json.loads(reply))

    def result(self, call_id, returned, is_error=False, real_executed=True):
        """Report the result of a passed call (any JSON value)."""
        self._send("result", {"call_id": call_id, "returned": returned,
                              "is_error": bool(is_error),
                              "real_executed": bool(real_executed)})

    def tools(self):
        """The tools the case offers: target/tools, {"tools": [...]}."""
        try:
            with open(os.path.join(self.dir, "tools"), "rb") as f:
                return json.loads(f.read(REPLY_MAX))
        except OSError as e:
            raise self._fail(e, "tools") from None
