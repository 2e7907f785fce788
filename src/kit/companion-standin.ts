/**
 * Python source of the doctor's stand-in for Hermes' host context (reference
 * B.1 registrar signatures, B.6 "outbound socket connects blocked"): loads a
 * companion's `__init__.py` as Hermes loads a native plugin (no bytecode
 * written), records what `register(ctx)` registers and whether each
 * callback accepts `**kwargs`, lists imports outside the standard library,
 * drives every hook, command and middleware once with the sample payloads
 * read from stdin, and prints one JSON report (companion output is moved to
 * stderr). Network connects raise and are reported.
 */
// An untagged template literal (backslashes doubled) is a pure value: bundles that never call
// companionStandInSource() drop it.
const STAND_IN_SOURCE = `import importlib.util
import inspect
import json
import logging
import os
import re
import socket
import sys
import time

sys.dont_write_bytecode = True
OUT = sys.stdout
sys.stdout = sys.stderr
NETWORK = []


def _blocked(*_args, **_kwargs):
    NETWORK.append(1)
    raise PermissionError("the doctor blocks network access of the companion")


socket.socket.connect = _blocked
socket.socket.connect_ex = _blocked
socket.create_connection = _blocked


class Manifest:
    def __init__(self, name, version):
        self.name = name
        self.key = name
        self.version = version


class HostContext:
    """Hermes' PluginContext registrars (Hermes PluginContext signatures), recording."""

    def __init__(self, name, version):
        self.manifest = Manifest(name, version)
        self.registered = []
        self.unload = []

    def register_hook(self, hook_name, callback):
        self.registered.append(("hook", hook_name, callback))

    def register_command(self, name, handler, description="", args_hint="", argument_mode=None):
        self.registered.append(("command", name, handler))

    def register_middleware(self, kind, callback):
        self.registered.append(("middleware", kind, callback))

    def register_cli_command(self, name, help, setup_fn, handler_fn=None, description=""):
        self.registered.append(("cli_command", name, handler_fn))

    def register_tool(self, name, toolset, schema, handler, check_fn=None, requires_env=None, is_async=False, description="", emoji="", override=False):
        self.registered.append(("tool", name, handler))

    def register_skill(self, name, path, description="", frontmatter=None):
        self.registered.append(("skill", name, None))

    def get_config(self, key, default=None):
        return default

    def on_unload(self, callback):
        self.unload.append(callback)


class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.items = []

    def emit(self, record):
        self.items.append([record.levelname, record.getMessage()])


def var_keyword(fn):
    try:
        return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False


def preview(value):
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 300 else text[:299] + "\\u2026"


def emit(report):
    OUT.write(json.dumps(report) + "\\n")
    OUT.flush()


def main():
    directory = os.path.abspath(sys.argv[1])
    plan = json.loads(sys.stdin.read())
    records = Records()
    logging.getLogger().addHandler(records)
    logging.getLogger().setLevel(logging.DEBUG)
    report = {"loaded": False, "register": None, "non_stdlib": [], "registered": [], "calls": [], "network": False, "logs": []}
    module_name = "hermes_plugins." + re.sub(r"[^A-Za-z0-9_]", "_", os.path.basename(directory))
    try:
        spec = importlib.util.spec_from_file_location(module_name, os.path.join(directory, "__init__.py"), submodule_search_locations=[directory])
        module = importlib.util.module_from_spec(spec)
        before = set(sys.modules)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        report["loaded"] = True
        report["non_stdlib"] = sorted({m.split(".")[0] for m in set(sys.modules) - before if m != module_name} - set(sys.stdlib_module_names) - {"hermes_plugins"})
    except Exception as exc:
        report["register"] = "import failed: " + type(exc).__name__
        emit(report)
        return
    register = getattr(module, "register", None)
    if not callable(register):
        report["register"] = "missing"
        emit(report)
        return
    ctx = HostContext(plan["name"], plan["version"])
    try:
        register(ctx)
        report["register"] = "ok"
    except Exception as exc:
        report["register"] = "raised " + type(exc).__name__
    report["logs"] = records.items
    records.items = []
    for kind, name, callback in ctx.registered:
        report["registered"].append({"kind": kind, "name": name, "var_keyword": callback is None or var_keyword(callback)})
    for kind, name, callback in ctx.registered:
        if not plan["drive"] or kind not in ("hook", "command", "middleware") or callback is None:
            continue
        started = time.monotonic()
        call = {"kind": kind, "name": name, "ok": True}
        try:
            if kind == "command":
                value = callback(plan["command_args"])
            else:
                value = callback(**plan["samples"].get(name, plan["samples"]["default"]))
            call["value"] = preview(value)
            call["result_type"] = type(value).__name__
        except Exception as exc:
            call["ok"] = False
            call["exception"] = type(exc).__name__
        call["elapsed_ms"] = round((time.monotonic() - started) * 1000.0, 1)
        warnings = [m for level, m in records.items if level == "WARNING"]
        found = [re.search(r"error_type=([A-Za-z0-9_.$]+)", m) for m in warnings]
        call["error_type"] = next((m.group(1) for m in found if m), None)
        call["failed_closed"] = any("failed closed" in m for m in warnings)
        call["logs"] = records.items
        records.items = []
        report["calls"].append(call)
    for callback in ctx.unload:
        try:
            callback()
        except Exception:
            pass
    report["network"] = bool(NETWORK)
    emit(report)


main()
`;

/** The Python source. */
export function companionStandInSource(): string {
  return STAND_IN_SOURCE;
}
