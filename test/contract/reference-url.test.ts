import fc from "fast-check";
import { describe as suite, expect, it } from "vitest";
import { ReleaseContractError } from "../../src/contract/errors.js";
import { digestShapeProblem, redactUrlUserinfo } from "../../src/contract/grammar.js";
import { isGhcrHost, isGhcrOrigin, parseReference, parseRepository } from "../../src/contract/reference.js";
import { parseTagReference } from "../../src/fetch/resolve.js";

const HEX = "a".repeat(64);

function failure(fn: () => unknown): ReleaseContractError {
  try {
    fn();
  } catch (problem) {
    return problem as ReleaseContractError;
  }
  throw new Error("expected a refusal");
}

suite("URLs where a repository or reference is expected", () => {
  const urls = [
    "https://user:pw@ghcr.io/a/b:v1",
    `https://user:pw@ghcr.io/a/b@sha256:${HEX}`,
    "http://u:p@ss@127.0.0.1:5000/a/b",
    "oci://token@ghcr.io/a/b",
  ];
  for (const url of urls) {
    it(`refuses ${url.split("@")[0]}... as REPOSITORY_INVALID without echoing the credentials`, () => {
      for (const parse of [() => parseRepository(url), () => parseReference(url), () => parseTagReference(url)]) {
        const problem = failure(parse);
        expect(problem.code).toBe("REPOSITORY_INVALID");
        expect(problem.message).toContain("drop the scheme");
        expect(problem.message).not.toMatch(/user:pw|u:p@ss|token@/);
      }
    });
  }

  const bare = [
    `user:s3cr3t-value@127.0.0.1:5000/acme/x@sha256:${HEX}`,
    "user:s3cr3t-value@ghcr.io/a/b:v1",
    "u:pa/ss@w0rd@ghcr.io/a/b",
    "token@ghcr.io/a/b",
  ];
  for (const value of bare) {
    it(`refuses scheme-less user-info ${value.slice(0, 6)}... as REPOSITORY_INVALID without echoing it`, () => {
      for (const parse of [() => parseRepository(value), () => parseReference(value), () => parseTagReference(value)]) {
        const problem = failure(parse);
        expect(problem.code).toBe("REPOSITORY_INVALID");
        expect(problem.message).toContain("user:password@");
        expect(problem.message).not.toMatch(/s3cr3t|pa\/ss|w0rd|token@/);
      }
    });
  }

  it("names whitespace around a reference (a quoting slip) with the trimmed value as the fix: REFERENCE_NOT_PINNED", () => {
    for (const [value, where] of [[` ghcr.io/a/b@sha256:${HEX}`, "leading"], [`ghcr.io/a/b@sha256:${HEX}\n`, "trailing"], [`\tghcr.io/a/b@sha256:${HEX} `, "leading"]] as const) {
      let error: unknown;
      try {
        parseReference(value);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ReleaseContractError);
      expect((error as ReleaseContractError).code).toBe("REFERENCE_NOT_PINNED");
      expect((error as Error).message).toContain(`has ${where} whitespace; expected <repository>@sha256:<64 hex> with none; fix: pass "ghcr.io/a/b@sha256:${HEX}" (check the quoting of the value you pasted)`);
    }
    expect(parseReference(`ghcr.io/a/b@sha256:${HEX}`).reference).toBe(`ghcr.io/a/b@sha256:${HEX}`);
  });

  it("resolve: a digest without its repository, and a tag outside the grammar, say what resolve takes (TAG_REFERENCE_INVALID, TAG_INVALID)", () => {
    const bareDigest = failure(() => parseTagReference(`sha256:${HEX}`));
    expect(bareDigest.code).toBe("TAG_REFERENCE_INVALID");
    expect(bareDigest.message).toBe(`expected <repository>:<tag> (e.g. ghcr.io/acme/plugin:v1.2.0), found "sha256:${HEX}", a digest without its repository; a digest needs no resolving: fetch takes <repository>@sha256:${HEX}`);
    const spaced = failure(() => parseTagReference("127.0.0.1:5000/a/b:bad tag"));
    expect(spaced.code).toBe("TAG_INVALID");
    expect(spaced.message).toBe('invalid tag "bad tag" in "127.0.0.1:5000/a/b:bad tag": a tag is 1-128 characters of A-Z a-z 0-9 _ . -, the first not . or -; this one has a space at character 4');
  });

  it("resolve: a '/' in the tag is told the tag grammar; a port is no tag", () => {
    expect(failure(() => parseTagReference("127.0.0.1:5000/a/b:ta/g")).message).toBe('expected <repository>:<tag> (e.g. ghcr.io/acme/plugin:v1.2.0), found "127.0.0.1:5000/a/b:ta/g" (a tag is 1-128 characters of A-Z a-z 0-9 _ . -, the first not . or -; this one has "/" at character 3)');
    expect(failure(() => parseTagReference("oci-layout:/srv/x:ta/g")).message).toContain('this one has "/" at character 3');
    expect(failure(() => parseTagReference("127.0.0.1:5000/a/b")).message).toBe('expected <repository>:<tag> (e.g. ghcr.io/acme/plugin:v1.2.0), found "127.0.0.1:5000/a/b"');
  });

  it("names whitespace around a repository with the trimmed value as the fix: REPOSITORY_INVALID", () => {
    for (const [value, where] of [[" ghcr.io/a/b", "leading"], ["ghcr.io/a/b\n", "trailing"], ["oci-layout:/srv/x ", "trailing"]] as const) {
      const problem = failure(() => parseRepository(value));
      expect(problem.code).toBe("REPOSITORY_INVALID");
      expect(problem.message).toBe(`repository ${JSON.stringify(value)} has ${where} whitespace; expected host[:port]/path or oci-layout:<dir> with none; fix: pass ${JSON.stringify(value.trim())}`);
    }
  });

  it("still parses host[:port]/path references", () => {
    expect(parseReference(`ghcr.io/a/b@sha256:${HEX}`).digest).toBe(`sha256:${HEX}`);
    expect(parseTagReference("127.0.0.1:5000/a/b:v1").tag).toBe("v1");
  });

  it("redacts only the user-info of a leading URL", () => {
    expect(redactUrlUserinfo("https://u:p@h/x@sha256:1")).toBe("https://***@h/x@sha256:1");
    expect(redactUrlUserinfo(`ghcr.io/a/b@sha256:${HEX}`)).toBe(`ghcr.io/a/b@sha256:${HEX}`);
    expect(redactUrlUserinfo(`u:p@ghcr.io/a/b@sha256:${HEX}`)).toBe(`***@ghcr.io/a/b@sha256:${HEX}`);
    expect(redactUrlUserinfo(`oci-layout:/s@x/y@sha256:${HEX}`)).toBe(`oci-layout:/s@x/y@sha256:${HEX}`);
    expect(redactUrlUserinfo(`localhost@sha256:${HEX}`)).toBe(`localhost@sha256:${HEX}`);
    // A tag written with '@' and a registry with a port are no user-info: nothing is hidden.
    expect(redactUrlUserinfo("ghcr.io/acme/p@latest")).toBe("ghcr.io/acme/p@latest");
    expect(redactUrlUserinfo("127.0.0.1:5000/acme/p@latest")).toBe("127.0.0.1:5000/acme/p@latest");
  });

  it("a password never reaches a refusal, whatever it holds (#, ?, /, @, :) and however the value is written (property)", () => {
    const password = fc.stringMatching(/^[A-Za-z0-9#?/@:%!$&'()*+,;=~._-]{6,24}$/).filter((p) => /[A-Za-z]{2}/.test(p) && !/^\d+$/.test(p));
    const form = fc.constantFrom(
      (pw: string) => `https://alice:${pw}@ghcr.io/acme/p`,
      (pw: string) => `https://alice:${pw}@ghcr.io`,
      (pw: string) => `alice:${pw}@ghcr.io/acme/p`,
      (pw: string) => `alice:${pw}@ghcr.io`,
      (pw: string) => `alice:${pw}@localhost:5000/acme/p@sha256:${HEX}`,
      (pw: string) => ` https://alice:${pw}@ghcr.io/acme/p`,
      (pw: string) => `alice:${pw}@ghcr.io/acme/p:v1 `,
      (pw: string) => `alice:${pw}@host@sha256:${HEX}`,
      (pw: string) => `alice:${pw}@host:5000@sha256:${HEX}`,
    );
    fc.assert(
      fc.property(password, form, (pw, make) => {
        const value = make(pw);
        for (const parse of [parseRepository, parseReference, parseTagReference] as const) {
          let message = "";
          try {
            parse(value);
          } catch (error) {
            message = (error as Error).message;
          }
          expect(message, `${parse.name}(${JSON.stringify(value)})`).not.toBe("");
          expect(message.includes(pw), `${parse.name}(${JSON.stringify(value)}): ${message}`).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("the reviewer's examples: no password in the message, and leading whitespace around a URL is named as a URL", () => {
    for (const value of [" https://alice:S3cr3t@ghcr.io/acme/p", "https://alice:S3cr#t@ghcr.io/acme/p", "https://alice:p/ss@ghcr.io/acme/p", "alice:S3cr3t@ghcr.io"]) {
      const problem = failure(() => parseRepository(value));
      expect(problem.code).toBe("REPOSITORY_INVALID");
      expect(problem.message).not.toMatch(/S3cr|p\/ss/);
    }
    expect(failure(() => parseRepository(" https://alice:S3cr3t@ghcr.io/acme/p")).message).toContain('found "https://***@ghcr.io/acme/p", a URL or a value with user:password@ in it');
    // The pinned repository a library caller passes is redacted in a mismatch too.
    for (const pin of ["https://user:pa#ss@host/x", "user:p/ss@host/x"]) {
      const problem = failure(() => parseReference(`ghcr.io/a/b@sha256:${HEX}`, pin));
      expect(problem.code).toBe("REFERENCE_REPOSITORY_MISMATCH");
      expect(problem.message).not.toMatch(/pa#ss|p\/ss/);
    }
  });
});

suite("a malformed digest in a reference says what is wrong", () => {
  const cases: Array<[string, RegExp]> = [
    ["sha256:xyz", /hex characters 0-9 a-f/],
    [`sha256:${"A".repeat(64)}`, /lowercase/],
    ["sha256:abcd", /expected 64 hex characters after sha256:, found 4/],
    [`sha512:${HEX}`, /expected sha256:<64 lowercase hex characters>/],
  ];
  for (const [digest, why] of cases) {
    it(`${digest.slice(0, 14)}... is REFERENCE_NOT_PINNED naming the problem`, () => {
      const problem = failure(() => parseReference(`ghcr.io/a/b@${digest}`));
      expect(problem.code).toBe("REFERENCE_NOT_PINNED");
      expect(problem.message).toMatch(why);
      expect(digestShapeProblem(digest)).toMatch(why);
    });
  }
});

suite("ghcr.io rules (isGhcrHost for the privacy gate, isGhcrOrigin for where a GitHub token may go)", () => {
  it.each([
    ["ghcr.io/acme/p", true, true],
    ["GHCR.IO/acme/p", true, true],
    ["ghcr.io:443/acme/p", true, true],
    ["ghcr.io:8443/acme/p", true, false],
    ["ghcr.io.evil.example/acme/p", false, false],
    ["evil.example/ghcr.io/p", false, false],
    ["127.0.0.1:5000/acme/p", false, false],
    ["oci-layout:/srv/ghcr.io", false, false],
  ])("%s: host %s, origin %s", (value, host, origin) => {
    const repository = parseRepository(value);
    expect(isGhcrHost(repository)).toBe(host);
    expect(isGhcrOrigin(repository)).toBe(origin);
  });
});

suite("a malformed repository or reference names the offending character, the rule and a fix", () => {
  const D = `sha256:${HEX}`;
  const E = `sha256:${"b".repeat(64)}`;

  it("a reference with two '@' digests is named as such (not as a tag) with a fix that parses", () => {
    const same = failure(() => parseReference(`127.0.0.1:5000/acme/p@${D}@${D}`));
    expect(same.code).toBe("REFERENCE_NOT_PINNED");
    expect(same.message).toContain(`carries two digests ('@sha256:aaaaaaaa...' and then '@sha256:aaaaaaaa...'); expected <repository>@sha256:<64 hex>, one '@' before one digest; fix: pass 127.0.0.1:5000/acme/p@${D}`);
    expect(same.message).not.toMatch(/tag|resolve|@sha256@/);
    expect(parseReference(same.message.split("fix: pass ")[1]!).reference).toBe(`127.0.0.1:5000/acme/p@${D}`);
    const differ = failure(() => parseReference(`ghcr.io/acme/p@${D}@${E}`));
    expect(differ.message).toContain(`fix: pass ghcr.io/acme/p@${E} or ghcr.io/acme/p@${D}, whichever release you mean (the two digests differ)`);
    expect(failure(() => parseReference(`oci-layout:/srv/s@${D}@${D}`)).message).toContain(`carries two digests`);
    // A tag before one digest is still a tag, with its fix.
    expect(failure(() => parseReference(`ghcr.io/acme/p:v1@${D}`)).message).toContain(`must not carry a tag`);
  });

  it.each([
    ["127.0.0.1:40637/ACME/my-plugin", 'found uppercase "A" at character 17; fix: pass 127.0.0.1:40637/acme/my-plugin'],
    ["ghcr.io/Acme/x", 'found uppercase "A" at character 9; fix: pass ghcr.io/acme/x'],
    ["ghcr.io/acme/x/", "found a trailing '/'; fix: pass ghcr.io/acme/x"],
    ["ghcr.io/acme/my\u2010plugin", "found non-ASCII \\u2010 at character 16 (it looks like '-' but is not ASCII); fix: pass ghcr.io/acme/my-plugin"],
    ["ghcr.io/acme/my\u200Bplugin", "found invisible \\u200B at character 16; fix: pass ghcr.io/acme/myplugin"],
    ["ghcr.io/acme//x", "found an empty component ('/' twice, at character 14); fix: pass ghcr.io/acme/x"],
    ["ghcr.io/acme/x-", 'found component "x-" ends with "-" (a separator stands between letters or digits)'],
    ["ghcr.io/acme/p@latest", "found \"@\" at character 15 ('@' only separates a reference's digest"],
    ["acme/hello", "found \"acme\" before the first '/', which has no '.', ':port' or localhost and so reads as part of a path; fix: put the registry host first, e.g. ghcr.io/acme/hello"],
    ["ghcr.io:abc/x", 'found port "abc" (a port is 1-65535)'],
    ["ghcr", "found no '/'"],
  ])("repository %j: REPOSITORY_INVALID naming what is wrong", (value, expected) => {
    const problem = failure(() => parseRepository(value));
    expect(problem.code).toBe("REPOSITORY_INVALID");
    expect(problem.message).toContain(expected);
    // Invisible characters are escaped, never printed raw; the rule is named.
    expect(problem.message).not.toContain("\u200B");
    if (value.startsWith("ghcr.io/") || value.startsWith("127.")) expect(problem.message).toContain("a repository path is lowercase components of a-z 0-9 joined inside by '.', '_', '__' or '-' and separated by '/'");
    const fix = /fix: pass (\S+)$/.exec(problem.message)?.[1];
    if (fix !== undefined) expect(parseRepository(fix).repository).toBe(fix);
  });

  it("a valid lowercase path is never called uppercase: the rule it breaks is named instead", () => {
    for (const value of ["ghcr.io/acme/x/", "ghcr.io/acme/my\u2010plugin", "ghcr.io/acme/my\u200Bplugin"]) {
      expect(failure(() => parseRepository(value)).message).not.toMatch(/uppercase/);
    }
  });

  it("an oci-layout store path may hold '@' (a home like /home/user@domain): the digest separator is the last '@' before a digest", () => {
    expect(parseRepository("oci-layout:/tmp/a@b/store")).toMatchObject({ kind: "layout", dir: "/tmp/a@b/store" });
    expect(parseReference(`oci-layout:/tmp/a@b/store@${D}`, "oci-layout:/tmp/a@b/store")).toMatchObject({ digest: D, reference: `oci-layout:/tmp/a@b/store@${D}` });
    expect(parseTagReference("oci-layout:/tmp/a@b/store:v0.2.0")).toMatchObject({ tag: "v0.2.0", repository: { dir: "/tmp/a@b/store" } });
    // A last component that ends in a digest would read as a pin: refused, naming it, with the store as the fix.
    const pinned = failure(() => parseRepository(`oci-layout:/tmp/x@${D}`));
    expect(pinned.code).toBe("REPOSITORY_INVALID");
    expect(pinned.message).toContain(`ends in a digest ("@${D}"); expected the store directory alone`);
    expect(pinned.message).toContain("fix: pass oci-layout:/tmp/x,");
  });

  it("resolve: a digest reference is named as already pinned with the fix; 'repo@tag' gets the ':' fix; a layout '@' is a directory", () => {
    const pinned = failure(() => parseTagReference(`ghcr.io/acme/p@${D}`));
    expect(pinned.code).toBe("TAG_REFERENCE_INVALID");
    expect(pinned.message).toContain("already digest-pinned ('@' and a digest at the end); a digest reference needs no resolving: pass it to fetch --reference as it is");
    expect(failure(() => parseTagReference(`oci-layout:/tmp/a@b/store@${D}`)).message).toContain("already digest-pinned");
    const atTag = failure(() => parseTagReference("ghcr.io/acme/p@latest"));
    expect(atTag.message).toContain("in a registry reference '@' only comes before a digest, and a tag follows ':'; fix: pass ghcr.io/acme/p:latest");
  });
});
