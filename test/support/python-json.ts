/**
 * Python 3 as the independent peer of canonical JSON: one `python3` process
 * answers a batch of documents with `json.dumps(json.loads(text),
 * sort_keys=True, separators=(",", ":"))`, or the value kind it parsed.
 */
import { spawnSync } from "node:child_process";

const SCRIPT = `
import json, sys
out = []
for line in sys.stdin:
    text = json.loads(line)
    try:
        value = json.loads(text)
    except Exception as e:
        out.append({"error": type(e).__name__})
        continue
    kinds = []
    def walk(v):
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return
        if isinstance(v, int):
            kinds.append("int" if abs(v) <= 2**53 - 1 else "big-int")
        elif isinstance(v, float):
            kinds.append("integral-float" if v == v and v not in (float("inf"), float("-inf")) and v.is_integer() else "float")
        elif isinstance(v, list):
            for x in v: walk(x)
        elif isinstance(v, dict):
            for x in v.values(): walk(x)
    walk(value)
    try:
        dumped = json.dumps(value, sort_keys=True, separators=(",", ":"))
        pretty = json.dumps(value, sort_keys=True, indent=2)
        out.append({"dumps": dumped + "\\n", "pretty": pretty + "\\n", "kinds": kinds})
    except Exception as e:
        out.append({"error": type(e).__name__, "kinds": kinds})
sys.stdout.write(json.dumps(out))
`;

/** Python's answer for one document text. */
export interface PythonAnswer {
  /** `json.dumps(..., sort_keys=True, separators=(",", ":"))` plus `\n`. */
  dumps?: string;
  /** `json.dumps(..., sort_keys=True, indent=2)` plus `\n`. */
  pretty?: string;
  /** Kind of every number Python parsed: `int`, `big-int` (beyond 2^53-1), `float`, `integral-float`. */
  kinds?: string[];
  /** Exception name when Python refused the text. */
  error?: string;
}

/** Ask Python 3 about every text in one process. */
export function pythonJsonDumps(texts: readonly string[]): PythonAnswer[] {
  const input = texts.map((t) => JSON.stringify(t)).join("\n") + "\n";
  const result = spawnSync("python3", ["-c", SCRIPT], { input, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`python3 failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as PythonAnswer[];
}
