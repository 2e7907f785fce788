/**
 * Crash injection, part 2: SIGKILL after staging, around the atomic push,
 * around the v<V> bind, inside the receipt upload, before the references and
 * after the GitHub Release (harness: test/support/crash-harness.ts); the
 * GitHub Release is created once. Part 1 is crash.test.ts.
 */
import { crashChainTest } from "../support/crash-harness.js";

crashChainTest("promotion and publication half", [
  "stage:done",
  "promote:before-push",
  "promote:pushed",
  "promote:done",
  "publish:before-bind",
  "publish:bound",
  "publish:receipt-upload:pushed:1",
  "publish:receipt-upload:before-tag",
  "publish:before-references",
  "publish:done",
  "github-release:done",
]);
