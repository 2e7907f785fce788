/**
 * The plugin authoring kit (DESIGN.md section 6): write Hermes plugin tools
 * in TypeScript, serve them over MCP stdio, build the portable package and
 * check it with Hermes' rules.
 */
export * from "./errors.js";
export * from "./naming.js";
export * from "./schema.js";
export * from "./arguments.js";
export * from "./logging.js";
export * from "./observability.js";
export * from "./config.js";
export * from "./tool.js";
export { guardStdout, isStdoutGuarded, protocolStdout, withStdoutOnStderr } from "./stdout.js";
export * from "./skills.js";
export * from "./capabilities.js";
export * from "./portable.js";
export * from "./plugin.js";
export * from "./render.js";
export * from "./build.js";
export * from "./doctor.js";
