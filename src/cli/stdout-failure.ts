/**
 * The one line a run prints on stderr when stdout refuses its answer for another reason than a
 * closed reader (`ENOSPC`, `EIO`, ...): src/cli/output.ts (in the bundle) and the `--version` fast
 * path of main.cts (which loads no bundle; it requires this module only when that write fails)
 * print the same text.
 */

/**
 * `hermes-plugin-kit: cannot write the answer to stdout: <code> (<syscall>); ... [IO_<code>]`.
 * @param code - the errno code (`ENOSPC`); `EIO` when the error carried none.
 * @param syscall - the failed system call (`write`), when known.
 */
export function stdoutFailureLine(code: string | undefined, syscall: string | undefined): string {
  const name = code ?? "EIO";
  return `hermes-plugin-kit: cannot write the answer to stdout: ${name}${syscall === undefined ? "" : ` (${syscall})`}; check where stdout goes (a full disk, a closed terminal) [IO_${name}]\n`;
}
