/**
 * Python source of the native companion's callbacks (Python kit commands, middleware and hooks; Python kit redaction,
 * A.12, B.1, B.2, B.4), appended to the transport (companion-transport.ts)
 * in the generated `__init__.py`: every answer checked against the exact
 * shape the host expects, the A.6 log lines (invoked / callback raised with
 * the error type only / ok with elapsed_ms, context = redacted session_id
 * and task_id; payloads and exception text never), `pre_tool_call` failing
 * closed (`{"action": "block", ...}`) on every failure, other callbacks
 * re-raising as the Python kit does, and `register(ctx)` registering slash
 * commands, request middleware and hooks in that order, each sorted, then
 * the registration summary line (Python kit config and logging helpers).
 */
// An untagged template literal (backslashes doubled) is a pure value: bundles that never call
// companionCallbacksSource() drop it.
const CALLBACKS_SOURCE = `def _value_of(answer):
    """The 'value' of a bridge answer; errors become BridgeError subclasses."""
    error = answer.get("error") if isinstance(answer, dict) else None
    if isinstance(error, dict):
        data = error.get("data") if isinstance(error.get("data"), dict) else {}
        if data.get("code") == "CALLBACK_RAISED":
            remote = data.get("errorType")
            remote = remote if isinstance(remote, str) and remote.replace("_", "a").replace(".", "a").isalnum() and len(remote) <= 64 else "Error"
            raise PluginCallbackError("callback raised %s" % remote, remote)
        if data.get("code") == "RESULT_INVALID":
            raise BridgeProtocolError("invalid answer (the callback returned the wrong shape)")
        raise BridgeProtocolError("malformed answer (error %s)" % str(error.get("code"))[:16])
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, dict) or "value" not in result:
        raise BridgeProtocolError("malformed answer (no value)")
    return result["value"]


def _exact(value, required, optional=()):
    return isinstance(value, dict) and all(k in value for k in required) and all(k in required or k in optional for k in value)


def _check_hook(name, value):
    if value is None:
        return None
    if name == "pre_tool_call":
        action = value.get("action") if isinstance(value, dict) else None
        ok = (action == "block" and _exact(value, ("action", "message")) and isinstance(value["message"], str) and value["message"].strip()) or (
            action == "approve" and _exact(value, ("action", "message"), ("rule_key",)) and isinstance(value["message"], str) and isinstance(value.get("rule_key", ""), str)
        ) or (action == "modify" and _exact(value, ("action", "args")) and isinstance(value["args"], dict))
    elif name == "pre_llm_call":
        ok = _exact(value, ("context",)) and isinstance(value["context"], str)
    elif name in _TRANSFORM_HOOKS:
        ok = isinstance(value, str)
    else:
        ok = True
    if not ok:
        raise BridgeProtocolError("invalid answer (wrong shape for %s)" % name)
    return value


def _check_command(name, value):
    if value is None or isinstance(value, str):
        return value
    raise BridgeProtocolError("invalid answer (wrong shape for /%s)" % name)


def _check_middleware(kind, value):
    key = "args" if kind == "tool_request" else "request"
    trace = ("source", "reason", "name")
    if value is None or (_exact(value, (key,), trace) and isinstance(value[key], dict) and all(isinstance(value.get(t, ""), str) for t in trace)):
        return value
    raise BridgeProtocolError("invalid answer (wrong shape for %s middleware)" % kind)


def _bridged(method, params, check):
    """Call the server; any failure is a BridgeError whose reason holds no payload or exception text."""
    try:
        return check(_value_of(_BRIDGE.call(method, params)))
    except BridgeError:
        raise
    except Exception as exc:
        raise BridgeError("bridge fault (%s)" % type(exc).__name__) from None


def _blocked(reason):
    return {"action": "block", "message": "%s: the pre_tool_call check is unavailable (%s); the tool call was blocked" % (SPEC["plugin"], reason)}


class _Context:
    """The log context (session_id, task_id), built only when a log line is emitted."""

    __slots__ = ("kwargs", "text")

    def __init__(self, kwargs):
        self.kwargs = kwargs
        self.text = None

    def __str__(self):
        if self.text is None:
            self.text = _safe_context(self.kwargs)
        return self.text


def _make_hook(name):
    def callback(**kwargs):
        start = time.monotonic()
        context = _Context(kwargs)
        _LOG.debug("%s: invoked; context=%s", name, context)
        try:
            value = _bridged(_METHODS["hook"], {"name": name, "kwargs": kwargs}, lambda v: _check_hook(name, v))
        except BridgeError as exc:
            _LOG.warning("%s: callback raised; elapsed_ms=%s; error_type=%s; context=%s", name, _elapsed(start), exc.error_type, context)
            if name != "pre_tool_call":
                raise
            _LOG.warning("pre_tool_call: failed closed; action=block; reason=%s", exc.reason)
            return _blocked(exc.reason)
        _LOG.info("%s: ok; elapsed_ms=%s; result=%s; context=%s", name, _elapsed(start), type(value).__name__, context)
        return value

    callback.__name__ = callback.__qualname__ = "%s_bridge" % name
    return callback


def _make_command(name):
    def handler(raw_args="", **kwargs):
        start = time.monotonic()
        raw = raw_args if isinstance(raw_args, str) else ("" if raw_args is None else str(raw_args))
        _LOG.debug("%s: invoked; args_chars=%d", name, len(raw))
        try:
            value = _bridged(_METHODS["command"], {"name": name, "rawArgs": raw}, lambda v: _check_command(name, v))
        except BridgeError as exc:
            _LOG.warning("%s: handler raised; elapsed_ms=%s; error_type=%s", name, _elapsed(start), exc.error_type)
            raise
        _LOG.info("%s: ok; elapsed_ms=%s; result=%s", name, _elapsed(start), type(value).__name__)
        return value

    handler.__name__ = handler.__qualname__ = "%s_command" % name.replace("-", "_")
    return handler


def _make_middleware(kind):
    label = "%s middleware" % kind

    def callback(**kwargs):
        start = time.monotonic()
        context = _Context(kwargs)
        _LOG.debug("%s: invoked; context=%s", label, context)
        try:
            value = _bridged(_METHODS["middleware"], {"kind": kind, "kwargs": kwargs}, lambda v: _check_middleware(kind, v))
        except BridgeError as exc:
            _LOG.warning("%s: callback raised; elapsed_ms=%s; error_type=%s; context=%s", label, _elapsed(start), exc.error_type, context)
            raise
        _LOG.info("%s: ok; elapsed_ms=%s; result=%s; context=%s", label, _elapsed(start), type(value).__name__, context)
        return value

    callback.__name__ = callback.__qualname__ = "%s_middleware" % kind
    return callback


def _names(values):
    return ",".join(sorted(values)) or "<none>"


def register(ctx):
    """Register the plugin's slash commands, request middleware and hooks (Python kit registration order)."""
    get_config = getattr(ctx, "get_config", None)
    if callable(get_config):
        try:
            configured = get_config("plugin_root")
            _BRIDGE.plugin_root = configured if isinstance(configured, str) and configured else None
        except Exception:  # an older host without settings: keep the default lookup
            _BRIDGE.plugin_root = None
    on_unload = getattr(ctx, "on_unload", None)
    if callable(on_unload):
        on_unload(_BRIDGE.stop)
    needed = [("register_command", SPEC["commands"]), ("register_middleware", SPEC["middleware"]), ("register_hook", SPEC["hooks"])]
    missing = [registrar for registrar, names in needed if names and not callable(getattr(ctx, registrar, None))]
    if missing:
        raise RuntimeError("this Hermes has no %s: %s needs a host with hooks, slash commands and request middleware" % (", ".join(missing), SPEC["companion"]))
    for command in sorted(SPEC["commands"], key=lambda c: c["name"]):
        ctx.register_command(command["name"], _make_command(command["name"]), description=command["description"], args_hint=command["args_hint"])
    for kind in sorted(SPEC["middleware"]):
        ctx.register_middleware(kind, _make_middleware(kind))
    for hook in sorted(SPEC["hooks"]):
        ctx.register_hook(hook, _make_hook(hook))
    try:
        _package_root(_BRIDGE.plugin_root)
    except BridgeError as exc:
        _LOG.warning("hermes_plugin_kit: companion of %s cannot reach its server yet: %s", SPEC["plugin"], exc.reason)
    manifest = getattr(ctx, "manifest", None)
    name = getattr(manifest, "name", None) or SPEC["companion"]
    _LOG.info(
        "hermes_plugin_kit: registered plugin lifecycle; plugin=%s; commands=%s; cli_commands=<none>; tools=<none>; middlewares=%s; hooks=%s; "
        "skills=<none>; skipped_optional_skills=<none>; memory_providers=<none>; image_gen_providers=<none>; video_gen_providers=<none>; "
        "capabilities=<none>; context_engine=<none>; context_engine_registration=<none>",
        name, _names(c["name"] for c in SPEC["commands"]), _names(SPEC["middleware"]), _names(SPEC["hooks"]),
    )
`;

/** The Python source. */
export function companionCallbacksSource(): string {
  return CALLBACKS_SOURCE;
}
