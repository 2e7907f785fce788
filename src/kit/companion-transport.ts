/**
 * Python source of the native companion's transport (Hermes PluginContext; Hermes MCP client),
 * embedded in the generated `__init__.py` by companion.ts. Standard library
 * only, no network: it finds the portable package next to the companion
 * (plugin.json name and version must match; `plugin_root` setting
 * overrides), launches its stdio server once and lazily exactly as Hermes
 * launches the mcp.json entry (filtered environment, `PLUGIN_ROOT`,
 * `PLUGIN_DATA` = `$HERMES_HOME/plugin-data/<namespace>`, working directory
 * only when mcp.json sets `cwd`, stderr appended to
 * `$HERMES_HOME/logs/mcp-stderr.log`), checks the `initialize` answer
 * (server name, bridge capability and version, every served name), and
 * speaks newline-delimited JSON-RPC with one deadline per call. A call waits
 * for a start only until its own deadline; the start runs on (at most 60 s
 * to the `initialize` answer) and serves the next call. A call that times out
 * kills the server (restarted lazily on the next call); a server that exits,
 * writes a non-JSON-RPC line or a message over 8 MiB fails every pending
 * call; a failed start is not retried for 5 s.
 * The placeholder `__HPK_SPEC__` is replaced by the companion's spec.
 */
// An untagged template literal (backslashes doubled) is a pure value: bundles that never call
// companionTransportSource() drop it.
const TRANSPORT_SOURCE = `from __future__ import annotations

import atexit
import json
import logging
import math
import os
import shutil
import subprocess
import threading
import time

SPEC = json.loads(__HPK_SPEC__)

_LOG = logging.getLogger(__name__)
_MAX_MESSAGE = 8 * 1024 * 1024
_RESTART_BACKOFF_S = 5.0
_START_TIMEOUT_S = 60.0
_SECRET_PARTS = ("token", "secret", "password", "passwd", "api_key", "apikey", "auth")
_PLACEHOLDERS = ("\\x24{PLUGIN_ROOT}", "\\x24{PLUGIN_DATA}")
_METHODS = {"hook": "hermes-plugin-kit/hook", "command": "hermes-plugin-kit/command", "middleware": "hermes-plugin-kit/middleware"}
_TRANSFORM_HOOKS = ("transform_llm_output", "transform_tool_result", "transform_terminal_output")


class BridgeError(RuntimeError):
    """The bridge could not produce an answer; 'reason' never holds payloads or exception text."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason
        self.error_type = type(self).__name__


class BridgeTimeout(BridgeError):
    pass


class BridgeUnavailable(BridgeError):
    pass


class BridgeProtocolError(BridgeError):
    pass


class PluginCallbackError(BridgeError):
    """The plugin's TypeScript callback threw; 'error_type' is its error class."""

    def __init__(self, reason, error_type):
        super().__init__(reason)
        self.error_type = error_type


def _redact(value, depth=0):
    if depth > 32:
        return "<max-depth>"
    if isinstance(value, dict):
        return {k: ("***" if any(p in str(k).lower() for p in _SECRET_PARTS) else _redact(v, depth + 1)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact(v, depth + 1) for v in value]
    return value


def _safe_context(kwargs):
    context = {k: kwargs[k] for k in ("session_id", "task_id") if kwargs.get(k) is not None}
    text = json.dumps(_redact(context), ensure_ascii=False, default=str)
    return text[:200] + "\\u2026" if len(text) > 200 else text


def _elapsed(start):
    return "%.2f" % ((time.monotonic() - start) * 1000.0)


_DROP = object()


def _jsonable(value, depth=0):
    """The JSON part of a host value: non-JSON values (objects, callables) are dropped."""
    if depth > 32:
        return _DROP
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else _DROP
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(key, str):
                converted = _jsonable(item, depth + 1)
                if converted is not _DROP:
                    out[key] = converted
        return out
    if isinstance(value, (list, tuple)):
        items = [_jsonable(item, depth + 1) for item in value]
        return [item for item in items if item is not _DROP]
    return _DROP


def _hermes_home():
    return os.environ.get("HERMES_HOME") or os.path.join(os.path.expanduser("~"), ".hermes")


def _read_json(path):
    with open(path, "rb") as handle:
        data = handle.read(1024 * 1024 + 1)
    if len(data) > 1024 * 1024:
        raise ValueError("larger than 1 MiB")
    return json.loads(data.decode("utf-8-sig"))


def _package_root(configured):
    """The portable package this companion serves: plugin.json name and version must match."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [configured] if configured else []
    candidates += [os.path.join(os.path.dirname(here), SPEC["plugin"]), os.path.dirname(os.path.dirname(here))]
    found = []
    for candidate in candidates:
        try:
            manifest = _read_json(os.path.join(candidate, "plugin.json"))
        except (OSError, ValueError):
            continue
        if isinstance(manifest, dict) and manifest.get("name") == SPEC["plugin"]:
            if manifest.get("version") == SPEC["version"]:
                return os.path.realpath(candidate)
            found.append("%s %s at %s" % (SPEC["plugin"], manifest.get("version"), candidate))
    if found:
        raise BridgeUnavailable("version mismatch: this companion is %s %s, found %s; install both directories from one build" % (SPEC["plugin"], SPEC["version"], "; ".join(found)))
    raise BridgeUnavailable("portable package %s %s not found next to the companion (set plugin_root in the companion's settings)" % (SPEC["plugin"], SPEC["version"]))


def _expand(value, root, data):
    return value.replace(_PLACEHOLDERS[0], root).replace(_PLACEHOLDERS[1], data)


def _inside(base, target):
    base = os.path.realpath(base)
    target = os.path.realpath(target)
    return target == base or target.startswith(base + os.sep)


def _launch(root):
    """argv, env and cwd of the server, as Hermes launches the portable package's stdio entry."""
    try:
        entry = _read_json(os.path.join(root, "mcp.json"))["mcpServers"][SPEC["server"]]
    except (OSError, ValueError, KeyError, TypeError):
        raise BridgeUnavailable("mcp.json has no server %s" % SPEC["server"]) from None
    if not isinstance(entry, dict) or entry.get("type") != "stdio" or not isinstance(entry.get("command"), str):
        raise BridgeUnavailable("mcp.json server %s is not a stdio entry" % SPEC["server"])
    home = _hermes_home()
    data = os.path.join(home, "plugin-data", SPEC["namespace"])
    try:
        os.makedirs(data, mode=0o700, exist_ok=True)
    except OSError:
        raise BridgeUnavailable("cannot create the plugin data directory") from None
    env = {k: v for k, v in os.environ.items() if k in SPEC["filtered_env"] or k.startswith("XDG_")}
    for key, value in (entry.get("env") or {}).items():
        if isinstance(key, str) and isinstance(value, str):
            env[key] = _expand(value, root, data)
    env["PLUGIN_ROOT"] = root
    env["PLUGIN_DATA"] = data
    command = entry["command"]
    if command.startswith("./"):
        executable = os.path.join(root, command[2:])
        if not _inside(root, executable):
            raise BridgeUnavailable("mcp.json command leaves the package")
    else:
        fallbacks = [os.path.join(home, "node", "bin"), os.path.join(os.path.expanduser("~"), ".local", "bin"), "/usr/local/bin"]
        executable = shutil.which(command, path=os.pathsep.join([env.get("PATH", "")] + fallbacks))
        if executable is None:
            raise BridgeUnavailable("%s not found on PATH" % command)
    args = [_expand(a, root, data) for a in entry.get("args") or [] if isinstance(a, str)]
    cwd = None
    if isinstance(entry.get("cwd"), str):
        cwd = _expand(entry["cwd"], root, data)
        cwd = os.path.join(root, cwd[2:]) if cwd.startswith("./") else cwd
        if _inside(data, cwd):
            os.makedirs(cwd, exist_ok=True)
        elif not _inside(root, cwd):
            raise BridgeUnavailable("mcp.json cwd leaves the package")
    return [executable] + args, env, cwd


def _stderr_log():
    """Append the server's stderr to Hermes' MCP stderr log, like the servers Hermes starts."""
    try:
        directory = os.path.join(_hermes_home(), "logs")
        os.makedirs(directory, exist_ok=True)
        handle = open(os.path.join(directory, "mcp-stderr.log"), "ab")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        handle.write(("===== [%s] starting hermes-plugin-kit bridge '%s' (%s %s) =====\\n" % (stamp, SPEC["server"], SPEC["plugin"], SPEC["version"])).encode("utf-8"))
        handle.flush()
        return handle
    except OSError:
        return subprocess.DEVNULL


class _Slot:
    __slots__ = ("done", "message", "error")

    def __init__(self):
        self.done = False
        self.message = None
        self.error = None


class _Server:
    """One running server process: newline-delimited JSON-RPC over its stdin/stdout.

    The calling thread reads its own answer (no reader thread, no hand-off); with concurrent callers
    one reads at a time and hands the others their answers. A watchdog enforces the reader's deadline
    by killing the process (checked every 20 ms).
    """

    def __init__(self, proc):
        self.proc = proc
        self.cond = threading.Condition()
        self.write_lock = threading.Lock()
        self.pending = {}
        self.next_id = 0
        self.failure = None
        self.reading = False
        self.read_deadline = None
        self.timed_out = False
        threading.Thread(target=self._watch, name="hpk-bridge-%s" % SPEC["server"], daemon=True).start()

    def alive(self):
        return self.failure is None and self.proc.poll() is None

    def send(self, message):
        try:
            text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            # Host values JSON cannot carry (live objects, callables, NaN): send the JSON part only.
            try:
                text = json.dumps(_jsonable(message), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
            except (TypeError, ValueError):
                raise BridgeProtocolError("request is not JSON") from None
        data = (text + "\\n").encode("utf-8")
        if len(data) > _MAX_MESSAGE:
            raise BridgeProtocolError("request larger than %d bytes" % _MAX_MESSAGE)
        try:
            with self.write_lock:
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
        except (OSError, ValueError):
            self.close(BridgeUnavailable("server unavailable (its input is closed)"))
            raise BridgeUnavailable("server unavailable (its input is closed)") from None

    def request(self, method, params, deadline):
        slot = _Slot()
        with self.cond:
            if self.failure is not None:
                raise self.failure
            self.next_id += 1
            rid = self.next_id
            self.pending[rid] = slot
        try:
            self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        except BridgeError:
            with self.cond:
                self.pending.pop(rid, None)
            raise
        while True:
            with self.cond:
                while not slot.done and self.reading and deadline > time.monotonic():
                    self.cond.wait(deadline - time.monotonic())
                if slot.done:
                    break
                if self.reading or deadline <= time.monotonic():
                    self.pending.pop(rid, None)
                    raise BridgeTimeout("timed out after %d ms" % SPEC["timeout_ms"])
                self.reading = True
                self.read_deadline = deadline
            try:
                self._read_until(slot)
            finally:
                with self.cond:
                    self.reading = False
                    self.read_deadline = None
                    self.cond.notify_all()
        if slot.error is not None:
            raise slot.error
        return slot.message

    def _exited(self):
        if self.timed_out:
            return BridgeTimeout("timed out after %d ms" % SPEC["timeout_ms"])
        return BridgeUnavailable("server unavailable (it exited)")

    def _read_until(self, slot):
        while not slot.done:
            try:
                line = self.proc.stdout.readline(_MAX_MESSAGE + 1)
            except (OSError, ValueError):
                line = b""
            if len(line) > _MAX_MESSAGE:
                return self.close(BridgeProtocolError("malformed answer (message too large)"))
            if not line.endswith(b"\\n"):
                return self.close(self._exited())
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                return self.close(BridgeProtocolError("malformed answer (not JSON-RPC)"))
            if "method" in message:
                if "id" in message:
                    self.send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "method not found"}})
                continue
            rid = message.get("id")
            with self.cond:
                answered = self.pending.pop(rid, None) if isinstance(rid, int) else None
                if answered is not None:
                    answered.message = message
                    answered.done = True
                    self.cond.notify_all()
        return None

    def _watch(self):
        while self.failure is None:
            time.sleep(0.02)
            deadline = self.read_deadline
            if self.reading and deadline is not None and time.monotonic() > deadline:
                self.timed_out = True
                try:
                    self.proc.kill()
                except OSError:
                    pass

    def close(self, failure):
        with self.cond:
            if self.failure is None:
                self.failure = failure
            pending, self.pending = self.pending, {}
            for slot in pending.values():
                slot.error = self.failure
                slot.done = True
            self.cond.notify_all()
        if self.proc.poll() is None:
            try:
                self.proc.kill()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass


class _Bridge:
    """The plugin's server, started once and lazily, restarted after it dies or times out."""

    def __init__(self):
        self.lock = threading.Lock()
        self.server = None
        self.starting = None
        self.start_error = None
        self.stopped = False
        self.failed_at = None
        self.failure = ""
        self.plugin_root = None

    def call(self, method, params):
        deadline = time.monotonic() + SPEC["timeout_ms"] / 1000.0
        server = self._current(deadline)
        try:
            return server.request(method, params, deadline)
        except BridgeTimeout:
            server.close(BridgeTimeout("timed out after %d ms" % SPEC["timeout_ms"]))
            raise

    def _current(self, deadline):
        # A start runs in its own thread, bounded by _START_TIMEOUT_S, not by the deadline of the call
        # that began it: a caller waits only until its own deadline, and a slow start (a loaded host)
        # still completes and serves the next call instead of being killed again and again.
        with self.lock:
            if self.server is not None and self.server.alive():
                return self.server
            if self.starting is None:
                if self.failed_at is not None and time.monotonic() - self.failed_at < _RESTART_BACKOFF_S:
                    raise BridgeUnavailable("server unavailable (start failed: %s)" % self.failure)
                self.starting = threading.Event()
                self.start_error = None
                threading.Thread(target=self._start_in_background, args=(self.starting,), name="hpk-start-%s" % SPEC["server"], daemon=True).start()
            starting = self.starting
        if not starting.wait(max(0.0, deadline - time.monotonic())):
            raise BridgeTimeout("timed out after %d ms (waiting for the server to start)" % SPEC["timeout_ms"])
        with self.lock:
            if self.server is not None and self.server.alive():
                return self.server
            if self.start_error is not None:
                raise self.start_error
            raise BridgeUnavailable("server unavailable (it exited)")

    def _start_in_background(self, starting):
        server, failure = None, None
        try:
            server = self._start(time.monotonic() + max(_START_TIMEOUT_S, SPEC["timeout_ms"] / 1000.0))
        except BridgeTimeout:
            failure = BridgeUnavailable("server unavailable (no initialize answer within %d s)" % _START_TIMEOUT_S)
        except Exception as exc:  # any start failure is the server being unavailable; its text is not logged
            failure = exc if isinstance(exc, BridgeError) else BridgeUnavailable("server unavailable (%s)" % type(exc).__name__)
        with self.lock:
            self.starting = None
            if self.stopped and server is not None:
                server.close(BridgeUnavailable("server unavailable (stopped)"))
                server, failure = None, BridgeUnavailable("server unavailable (stopped)")
            self.server = server
            self.start_error = failure
            if failure is None:
                self.failed_at = None
            else:
                self.failed_at = time.monotonic()
                self.failure = failure.reason
        starting.set()

    def _start(self, deadline):
        argv, env, cwd = _launch(_package_root(self.plugin_root))
        log = _stderr_log()
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env, cwd=cwd, close_fds=True)
        except OSError:
            raise BridgeUnavailable("server unavailable (could not start %s)" % os.path.basename(argv[0])) from None
        finally:
            if log is not subprocess.DEVNULL:
                log.close()
        server = _Server(proc)
        try:
            client = {"name": "hermes-plugin-kit-companion", "version": SPEC["version"]}
            answer = server.request("initialize", {"protocolVersion": SPEC["protocol_version"], "capabilities": {}, "clientInfo": client}, deadline)
            self._check_initialize(answer)
            server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        except Exception as exc:
            failure = exc if isinstance(exc, BridgeError) else BridgeProtocolError("malformed answer (initialize)")
            server.close(failure)
            raise failure from None
        return server

    @staticmethod
    def _check_initialize(answer):
        result = answer.get("result") if isinstance(answer, dict) else None
        info = result.get("serverInfo") if isinstance(result, dict) else None
        if not isinstance(info, dict) or info.get("name") != SPEC["server"]:
            raise BridgeProtocolError("malformed answer (initialize is not from server %s)" % SPEC["server"])
        capabilities = result.get("capabilities")
        experimental = capabilities.get("experimental") if isinstance(capabilities, dict) else None
        bridge = experimental.get(SPEC["capability"]) if isinstance(experimental, dict) else None
        if not isinstance(bridge, dict) or bridge.get("version") != SPEC["bridge_version"]:
            raise BridgeProtocolError("server does not speak bridge version %d; rebuild the plugin" % SPEC["bridge_version"])
        for key, names in (("hooks", SPEC["hooks"]), ("commands", [c["name"] for c in SPEC["commands"]]), ("middleware", SPEC["middleware"])):
            served = bridge.get(key) if isinstance(bridge.get(key), list) else []
            if any(name not in served for name in names):
                raise BridgeProtocolError("server does not serve every %s of this companion; install both directories from one build" % key)

    def stop(self, *_args):
        with self.lock:
            self.stopped = True
            server, self.server = self.server, None
        if server is not None:
            server.close(BridgeUnavailable("server unavailable (stopped)"))


_BRIDGE = _Bridge()
atexit.register(_BRIDGE.stop)
`;

/** The Python source. */
export function companionTransportSource(): string {
  return TRANSPORT_SOURCE;
}
