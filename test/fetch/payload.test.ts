import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  bundleChecksumPaths,
  bundleLayerTitles,
  formatPayloadChecksums,
  isAllowedPayloadTitle,
  parsePayloadChecksums,
} from "../../src/contract/payload.js";

const A = "a".repeat(64);
const B = "b".repeat(64);
const C = "c".repeat(64);
const PATHS = bundleChecksumPaths("demo-plugin", "1.2.3");
const GOOD = `${A}  release-source.bundle\n${B}  release-manifest.json\n${C}  dist/demo-plugin-1.2.3.tgz\n`;

describe("bundleChecksumPaths / bundleLayerTitles", () => {
  it("names the bundle, manifest and npm tarball (scoped names flattened)", () => {
    expect(PATHS).toEqual(["release-source.bundle", "release-manifest.json", "dist/demo-plugin-1.2.3.tgz"]);
    expect(bundleChecksumPaths("@acme/x", "0.1.0")[2]).toBe("dist/acme-x-0.1.0.tgz");
    expect(bundleLayerTitles("demo-plugin", "1.2.3")).toEqual([
      "dist/demo-plugin-1.2.3.tgz",
      "release-manifest.json",
      "release-payload.sha256",
      "release-source.bundle",
    ]);
  });
});

describe("formatPayloadChecksums", () => {
  it("writes sha256sum text lines in the given order", () => {
    const text = formatPayloadChecksums([
      { path: "release-source.bundle", sha256: A },
      { path: "release-manifest.json", sha256: B },
      { path: "dist/demo-plugin-1.2.3.tgz", sha256: C },
    ]);
    expect(text).toBe(GOOD);
  });
  it("refuses bad hex, unsafe characters and duplicates", () => {
    expect(() => formatPayloadChecksums([{ path: "x", sha256: "A".repeat(64) }])).toThrowWithCode("PAYLOAD_CHECKSUM_LINE_INVALID");
    expect(() => formatPayloadChecksums([{ path: "a b", sha256: A }])).toThrowWithCode("PAYLOAD_CHECKSUM_LINE_INVALID");
    expect(() => formatPayloadChecksums([{ path: "x", sha256: A }, { path: "x", sha256: B }])).toThrowWithCode("PAYLOAD_CHECKSUM_DUPLICATE");
  });
  it("round-trips through parsePayloadChecksums for any order", () => {
    fc.assert(
      fc.property(fc.shuffledSubarray([0, 1, 2], { minLength: 3, maxLength: 3 }), fc.array(fc.constantFrom(...A.slice(0, 1), "0", "f", "9"), { minLength: 64, maxLength: 64 }), (order, hexChars) => {
        const hex = hexChars.join("");
        const entries = order.map((i) => ({ path: PATHS[i]!, sha256: hex }));
        const parsed = parsePayloadChecksums(Buffer.from(formatPayloadChecksums(entries)), PATHS);
        expect([...parsed.keys()].sort()).toEqual([...PATHS].sort());
      }),
    );
  });
});

describe("parsePayloadChecksums", () => {
  it("accepts the three paths once each, with or without the final newline, CRLF too", () => {
    const map = parsePayloadChecksums(Buffer.from(GOOD), PATHS);
    expect(map.get("dist/demo-plugin-1.2.3.tgz")).toBe(C);
    expect(parsePayloadChecksums(GOOD.trimEnd(), PATHS).size).toBe(3);
    expect(parsePayloadChecksums(GOOD.replaceAll("\n", "\r\n"), PATHS).size).toBe(3);
  });
  it("refuses non-ASCII bytes", () => {
    expect(() => parsePayloadChecksums(Buffer.concat([Buffer.from(GOOD), Buffer.from([0xc3, 0xa9])]), PATHS)).toThrowWithCode("PAYLOAD_CHECKSUMS_NOT_ASCII");
    expect(() => parsePayloadChecksums(GOOD + "é", PATHS)).toThrowWithCode("PAYLOAD_CHECKSUMS_NOT_ASCII");
  });
  it("refuses a missing line", () => {
    expect(() => parsePayloadChecksums(GOOD.split("\n").slice(1).join("\n"), PATHS)).toThrowWithCode("PAYLOAD_CHECKSUM_INCOMPLETE");
    expect(() => parsePayloadChecksums("", PATHS)).toThrowWithCode("PAYLOAD_CHECKSUM_INCOMPLETE");
  });
  it("refuses a duplicated line", () => {
    expect(() => parsePayloadChecksums(GOOD + `${A}  release-source.bundle\n`, PATHS)).toThrowWithCode("PAYLOAD_CHECKSUM_DUPLICATE");
  });
  it("refuses ../secret, absolute and unexpected paths", () => {
    for (const path of ["../secret", "/etc/passwd", "dist/other-1.0.0.tgz", "release-payload.sha256", "dist/../release-source.bundle"]) {
      expect(() => parsePayloadChecksums(GOOD + `${A}  ${path}\n`, PATHS)).toThrowWithCode("PAYLOAD_CHECKSUM_LINE_INVALID");
    }
  });
  it("refuses blank lines, uppercase hex, one space, binary-mode '*' and trailing spaces", () => {
    for (const text of [
      GOOD + "\n",
      "\n" + GOOD,
      GOOD.replace(A, A.toUpperCase()),
      GOOD.replace(`${A}  `, `${A} `),
      GOOD.replace(`${A}  `, `${A} *`),
      GOOD.replace("release-source.bundle", "release-source.bundle "),
      GOOD.replace(A, A.slice(1)),
    ]) {
      expect(() => parsePayloadChecksums(text, PATHS)).toThrowWithCode("PAYLOAD_CHECKSUM_LINE_INVALID");
    }
  });
});

describe("isAllowedPayloadTitle", () => {
  it("allows the four static names and dist/<stem>-<semver>.tgz", () => {
    for (const t of ["release-manifest.json", "release-source.bundle", "release-payload.sha256", "release-receipt.json", "dist/demo-plugin-1.2.3.tgz", "dist/acme-x-0.0.0.tgz"]) {
      expect(isAllowedPayloadTitle(t)).toBe(true);
    }
  });
  it("refuses traversal, absolute paths, other directories, bad SemVer and other names", () => {
    for (const t of [
      "../escape",
      "/absolute",
      "dist/../../x",
      "dist/../release-manifest.json",
      "./release-manifest.json",
      "dist/demo-1.2.3.tgz/x",
      "dist/sub/demo-1.2.3.tgz",
      "dist/demo-01.2.3.tgz",
      "dist/demo-1.2.3-rc.1.tgz",
      "dist/demo-1.2.3.tar.gz",
      "dist/.hidden-1.2.3.tgz",
      "dist/Demo-1.2.3.tgz",
      "release-manifest.json/",
      "",
      "other.txt",
      5,
    ]) {
      expect(isAllowedPayloadTitle(t)).toBe(false);
    }
  });
  it("pins the tarball stem to a package when one is given", () => {
    expect(isAllowedPayloadTitle("dist/demo-plugin-1.2.3.tgz", "demo-plugin")).toBe(true);
    expect(isAllowedPayloadTitle("dist/other-1.2.3.tgz", "demo-plugin")).toBe(false);
    expect(isAllowedPayloadTitle("dist/acme-x-1.2.3.tgz", "@acme/x")).toBe(true);
    expect(isAllowedPayloadTitle("release-manifest.json", "demo-plugin")).toBe(true);
  });
});
