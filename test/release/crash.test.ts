/**
 * Crash injection, part 1: SIGKILL at the step boundaries of intent ..
 * check-private, inside the bundle upload and around the attestation push
 * (harness: test/support/crash-harness.ts). Part 2 is crash-publish.test.ts.
 */
import { crashChainTest } from "../support/crash-harness.js";

crashChainTest("build and staging half", [
  "intent:done",
  "materialize:done",
  "restore:recorded",
  "gates:done",
  "build:done",
  "manifest:recorded",
  "check-immutable:done",
  "check-private:done",
  "stage:upload:pushed:2",
  "stage:upload:before-tag",
  "stage:before-output",
  "attest:pushed",
  "attest:done",
]);
