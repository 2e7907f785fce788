"""A recording stand-in of Hermes' PluginContext (Hermes PluginContext registrar signatures) for tests.

Usage: python3 host_standin.py <companion dir>
Loads the companion's __init__.py as Hermes loads a native plugin, calls register(ctx), prints one JSON
line with the registrations and log records, then answers one JSON line per JSON request on stdin:
  {"op": "hook", "name": ..., "kwargs": {...}}          the registered hook callback(**kwargs) ("objects": true adds non-JSON values)
  {"op": "command", "name": ..., "raw": "..."}          the registered command handler(raw)
  {"op": "middleware", "kind": ..., "kwargs": {...}}    the registered middleware callback(**kwargs)
  {"op": "kill_after", "seconds": s, "then": {...}}     run "then" while the bridge server is SIGKILLed after s seconds
  {"op": "parallel", "requests": [...]}                 every request on its own thread at once
  {"op": "server_pid"}                                  pid of the running bridge server, or null
  {"op": "unload"}                                      the on_unload callbacks
Outbound socket connects raise (the companion must not use the network).
"""
import importlib.util
import inspect
import json
import logging
import os
import signal
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True


def _no_network(*_args, **_kwargs):
    raise PermissionError("network access is blocked in the host stand-in")


socket.socket.connect = _no_network
socket.socket.connect_ex = _no_network
socket.create_connection = _no_network


class Manifest:
    def __init__(self, name):
        self.name = name
        self.key = name


class RecordingPluginContext:
    def __init__(self, name, settings):
        self.manifest = Manifest(name)
        self.settings = settings
        self.calls = []
        self.hooks = {}
        self.commands = {}
        self.middlewares = {}
        self.unload = []

    def register_hook(self, hook_name, callback):
        self.calls.append(["register_hook", hook_name])
        self.hooks[hook_name] = callback

    def register_command(self, name, handler, description="", args_hint="", argument_mode=None):
        self.calls.append(["register_command", name, description, args_hint])
        self.commands[name] = handler

    def register_middleware(self, kind, callback):
        self.calls.append(["register_middleware", kind])
        self.middlewares[kind] = callback

    def register_tool(self, name, toolset, schema, handler, check_fn=None, requires_env=None, is_async=False, description="", emoji="", override=False):
        self.calls.append(["register_tool", name])

    def register_skill(self, name, path, description="", frontmatter=None):
        self.calls.append(["register_skill", name])

    def get_config(self, key, default=None):
        return self.settings.get(key, default)

    def on_unload(self, callback):
        self.unload.append(callback)


class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.items = []

    def emit(self, record):
        self.items.append([record.levelname, record.getMessage()])

    def take(self):
        items, self.items = self.items, []
        return items


def accepts_var_keyword(fn):
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())


def main():
    directory = os.path.abspath(sys.argv[1])
    settings = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    records = Records()
    logging.getLogger().addHandler(records)
    logging.getLogger().setLevel(logging.DEBUG)
    name = os.path.basename(directory)
    module_name = "hermes_plugins." + name.replace("-", "_")
    spec = importlib.util.spec_from_file_location(module_name, os.path.join(directory, "__init__.py"), submodule_search_locations=[directory])
    module = importlib.util.module_from_spec(spec)
    before = set(sys.modules)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    imported = sorted(m.split(".")[0] for m in set(sys.modules) - before if m != module_name)
    missing = settings.pop("_missing_registrars", [])
    ctx = RecordingPluginContext(name, settings)
    for registrar in missing:
        setattr(ctx, registrar, None)  # an older host without this registrar
    register_error = None
    try:
        module.register(ctx)
    except Exception as exc:  # the companion's own refusal text names the missing registrars
        register_error = [type(exc).__name__, str(exc)]
    callbacks = list(ctx.hooks.values()) + list(ctx.middlewares.values()) + list(ctx.commands.values())
    out = sys.stdout
    out.write(json.dumps({
        "calls": ctx.calls,
        "logs": records.take(),
        "var_keyword": all(accepts_var_keyword(fn) for fn in callbacks),
        "non_stdlib_imports": sorted(set(m for m in imported if m not in sys.stdlib_module_names)),
        "register_error": register_error,
    }) + "\n")
    out.flush()

    def run(request):
        op = request["op"]
        if op == "hook":
            kwargs = dict(request.get("kwargs", {}))
            if request.get("objects"):
                # What Hermes also passes: live objects and callables, and values JSON cannot carry.
                kwargs.update(parent_agent=object(), next_call=print, nested={"ok": 1, "bad": object(), "list": [1, object(), float("nan"), 2.5]})
            return ctx.hooks[request["name"]](**kwargs)
        if op == "command":
            return ctx.commands[request["name"]](request.get("raw", ""))
        if op == "middleware":
            return ctx.middlewares[request["kind"]](**request.get("kwargs", {}))
        if op == "server_pid":
            server = module._BRIDGE.server
            return server.proc.pid if server is not None and server.alive() else None
        if op == "unload":
            for callback in ctx.unload:
                callback()
            return None
        if op == "parallel":
            # Fire every request on its own thread at once; answers in request order.
            answers = [None] * len(request["requests"])

            def one(index, body):
                try:
                    answers[index] = {"ok": True, "value": run(body)}
                except Exception as exc:  # the test asserts the type only
                    answers[index] = {"ok": False, "exception": type(exc).__name__}

            threads = [threading.Thread(target=one, args=(i, body)) for i, body in enumerate(request["requests"])]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            return answers
        if op == "kill_after":
            def killer():
                time.sleep(request["seconds"])
                server = module._BRIDGE.server
                if server is not None:
                    os.kill(server.proc.pid, signal.SIGKILL)
            threading.Thread(target=killer, daemon=True).start()
            return run(request["then"])
        raise ValueError("unknown op " + op)

    for line in sys.stdin:
        request = json.loads(line)
        started = time.monotonic()
        try:
            value = run(request)
            answer = {"ok": True, "value": value}
        except Exception as exc:  # the test asserts the exception type, never its text
            answer = {"ok": False, "exception": type(exc).__name__}
        answer["elapsed_ms"] = round((time.monotonic() - started) * 1000.0, 1)
        answer["logs"] = records.take()
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
