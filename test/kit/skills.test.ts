import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSkillDocument, pluginSkill, PluginKitError, qualifiedSkillName, referenceTool, referenceToolName, setLogSink } from "../../src/kit/index.js";

let root: string;
beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), "hpk-skills-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function skill(dir: string, text: string): string {
  mkdirSync(path.join(root, "skills", dir), { recursive: true });
  writeFileSync(path.join(root, "skills", dir, "SKILL.md"), text);
  return `skills/${dir}`;
}


const GOOD = "---\nname: good-skill\ndescription: Does good things.\nlicense: MIT\ncompatibility: node >= 20\nallowed-tools: calculate\nmetadata:\n  author: me\n---\n\n# Body\n";

describe("pluginSkill (portable rules, Agent Plugins v1 loader)", () => {
  it("accepts a valid skill relative to the plugin root", () => {
    const s = pluginSkill(skill("good-skill", GOOD), { root });
    expect(s.name).toBe("good-skill");
    expect(s.description).toBe("Does good things.");
    expect(s.relativeDir).toBe("skills/good-skill");
    expect(s.referencesDir).toBeUndefined();
    expect(pluginSkill(skill("bom-skill", "\uFEFF" + GOOD.replace("good-skill", "bom-skill").replace("\n", "\r\n")), { root }).name).toBe("bom-skill");
  });
  it.each([
    ["glued", "---\nname: glued\ndescription: The closing marker is glued---\nbody\n", "SKILL_FRONTMATTER_UNTERMINATED"],
    ["colon", "---\nname: colon\ndescription: Use this: now\n---\nbody\n", "SKILL_FRONTMATTER_INVALID_YAML"],
    ["nofront", "# just a body\n", "SKILL_FRONTMATTER_MISSING"],
    ["listfront", "---\n- a\n- b\n---\nbody\n", "SKILL_FRONTMATTER_NOT_MAPPING"],
    ["mismatch", "---\nname: other-name\ndescription: d\n---\nbody\n", "SKILL_NAME_MISMATCH"],
    ["Bad_Name", "---\nname: Bad_Name\ndescription: d\n---\nbody\n", "SKILL_NAME_INVALID"],
    ["double--dash", "---\nname: double--dash\ndescription: d\n---\nbody\n", "SKILL_NAME_INVALID"],
    ["nodesc", "---\nname: nodesc\n---\nbody\n", "SKILL_DESCRIPTION_INVALID"],
    ["longdesc", `---\nname: longdesc\ndescription: ${"x".repeat(1025)}\n---\nbody\n`, "SKILL_DESCRIPTION_INVALID"],
    ["nested", "---\nname: nested\ndescription: d\nmetadata:\n  hermes:\n    tags: [a]\n---\nbody\n", "SKILL_METADATA_NOT_FLAT"],
    ["numbermeta", "---\nname: numbermeta\ndescription: d\nmetadata:\n  version: 1\n---\nbody\n", "SKILL_METADATA_NOT_FLAT"],
    ["badlicense", "---\nname: badlicense\ndescription: d\nlicense: [MIT]\n---\nbody\n", "SKILL_FIELD_INVALID"],
    ["badcompat", `---\nname: badcompat\ndescription: d\ncompatibility: ${"x".repeat(501)}\n---\nbody\n`, "SKILL_FIELD_INVALID"],
    ["badtools", "---\nname: badtools\ndescription: d\nallowed-tools: [a, b]\n---\nbody\n", "SKILL_FIELD_INVALID"],
  ])("refuses %s with %s", (dir, text, code) => {
    const lines: string[] = [];
    const previous = setLogSink((line) => lines.push(line));
    try {
      expect(() => pluginSkill(skill(dir, text), { root })).toThrowWithCode(PluginKitError, code);
    } finally {
      setLogSink(previous);
    }
    if (dir === "nested") expect(lines.some((line) => line.includes("WARNING") && line.includes("metadata.hermes"))).toBe(true);
  });
  it("refuses a missing or symlinked SKILL.md", () => {
    expect(() => pluginSkill("skills/absent", { root })).toThrowWithCode(PluginKitError, "SKILL_NOT_FOUND");
    mkdirSync(path.join(root, "skills", "linked"), { recursive: true });
    writeFileSync(path.join(root, "elsewhere.md"), GOOD.replace("good-skill", "linked"));
    symlinkSync(path.join(root, "elsewhere.md"), path.join(root, "skills", "linked", "SKILL.md"));
    expect(() => pluginSkill("skills/linked", { root })).toThrowWithCode(PluginKitError, "SKILL_NOT_FOUND");
  });
  it("parses the frontmatter and body", () => {
    expect(parseSkillDocument("---\nname: a\n---   \nbody").body).toBe("body");
    expect(() => parseSkillDocument("---\nname: a\nname: b\n---\n")).toThrowWithCode(PluginKitError, "SKILL_FRONTMATTER_INVALID_YAML");
  });
});

describe("qualifiedSkillName (Agent Plugins v1 loader vectors)", () => {
  it.each([
    ["example-rules", "agent-plugin-example-rules-a0dbf553"],
    ["my-ts-plugin", "agent-plugin-my-ts-plugin-ff214725"],
    ["acme/weather", "agent-plugin-acme-weather-100ff1f9"],
  ])("%s -> %s", (key, namespace) => {
    expect(qualifiedSkillName(key, "x")).toBe(`${namespace}:x`);
  });
});

describe("referenceTool (Python kit plugin_reference_tool)", () => {
  let tool: ReturnType<typeof referenceTool>;
  let restoreSink: Parameters<typeof setLogSink>[0];
  beforeAll(() => {
    const dir = skill("ref-skill", GOOD.replace("good-skill", "ref-skill"));
    const refs = path.join(root, dir, "references");
    mkdirSync(path.join(refs, "sub"), { recursive: true });
    writeFileSync(path.join(refs, "a.md"), "alpha");
    writeFileSync(path.join(refs, "sub", "b.md"), "beta");
    writeFileSync(path.join(root, "secret.txt"), "outside");
    symlinkSync(path.join(root, "secret.txt"), path.join(refs, "escape.md"));
    tool = referenceTool(pluginSkill(dir, { root }));
    restoreSink = setLogSink(() => undefined);
  });
  afterAll(() => setLogSink(restoreSink));
  const text = (r: { content: Array<{ text: string }> }) => r.content[0]?.text ?? "";

  it("is read-only with the default name", () => {
    expect(tool.name).toBe("ref_skill_read_reference");
    expect(tool.readOnly).toBe(true);
    expect(referenceToolName("9lives")).toBe("skill_9lives_read_reference");
    expect(() => referenceTool(pluginSkill(skill("noref", GOOD.replace("good-skill", "noref")), { root }))).toThrowWithCode(PluginKitError, "SKILL_REFERENCES_INVALID");
  });
  it("lists files (not following symlinks) and reads one", async () => {
    const listed = await tool.call({});
    expect(listed.structuredContent).toEqual({ success: true, data: { references_dir: "skills/ref-skill/references", files: ["a.md", "sub/b.md"] } });
    const read = await tool.call({ file_path: "sub/b.md" });
    expect(read.structuredContent).toEqual({ success: true, data: { file_path: "sub/b.md", content: "beta" } });
  });
  it.each([
    ["../../secret.txt", "must not contain '..'"],
    ["/etc/passwd", "must be relative"],
    ["escape.md", "escapes references_dir"],
    ["missing.md", "not found"],
    ["sub", "is not a file"],
  ])("refuses %s", async (filePath, message) => {
    const result = await tool.call({ file_path: filePath });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("ref_skill_read_reference failed: ");
    expect(text(result)).toContain(message);
    expect(text(result)).not.toContain("outside");
  });
  it("refuses a non-string file_path before the handler", async () => {
    const result = await tool.call({ file_path: 5 });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe("file_path must be string");
  });
});
