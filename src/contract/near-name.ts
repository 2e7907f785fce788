/**
 * The misspelling test behind every "did you mean": an unknown option, key, flag, command or gate name and
 * the known name it most likely meant. A leaf module (no imports), so that the CLI's usage errors use it at
 * start-up without loading the contract.
 */
/**
 * The known name `value` most likely misspells: one of `known` equal to it ignoring letter case, else (when
 * `prefixes`) one that starts it or that it starts, else the nearest within two single-character edits
 * ({@link editDistance}; the first of equals), else the first whose last words are all of `value`'s words or
 * the other way round ({@link nameWords}: `repository` for `registryRepository`, `bundle-reference` for
 * `--expect-bundle-reference`; the shorter's words at least 4 characters in all). `undefined` when none is.
 * Every "did you mean" of an unknown option, key, flag, command or gate name uses it.
 */
export function nearestName(value: string, known: readonly string[], prefixes = false): string | undefined {
  const lower = value.toLowerCase();
  const same = known.find((name) => name.toLowerCase() === lower || (prefixes && value !== "" && (name.startsWith(value) || value.startsWith(name))));
  if (same !== undefined) return same;
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(name, value, 2);
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  if (best !== undefined) return best.name;
  const given = nameWords(value);
  return known.find((name) => endsInWords(nameWords(name), given) || endsInWords(given, nameWords(name)));
}

/** The words of a name, lower-cased: split at `-`, `_`, `.`, spaces and before each upper-case letter that follows a lower-case one or a digit. */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[-_.\s]+/)
    .filter((word) => word !== "")
    .map((word) => word.toLowerCase());
}

/** True when `tail` (at least 4 characters in all) is the end of `words` and shorter than it. */
function endsInWords(words: readonly string[], tail: readonly string[]): boolean {
  if (tail.length === 0 || tail.length >= words.length || tail.join("").length < 4) return false;
  return tail.every((word, i) => words[words.length - tail.length + i] === word);
}

/**
 * Levenshtein distance of `a` and `b` (single-character inserts, deletes and substitutions), or `max + 1` as
 * soon as it must exceed `max` (length difference over `max`, or either over 64 characters when a `max` is given).
 */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > max || (max !== Number.POSITIVE_INFINITY && (a.length > 64 || b.length > 64))) return max + 1;
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min((row[j] as number) + 1, (next[j - 1] as number) + 1, (row[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return Math.min(row[b.length] as number, max + 1);
}
