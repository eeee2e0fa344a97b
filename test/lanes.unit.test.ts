/**
 * The two test lanes (docs/development.md, "Test lanes"): a `*.unit.test.ts` file runs in plain
 * Node (vitest.unit.config.ts: no workerd, no global setup), every other `test/**\/*.test.ts` runs
 * inside workerd (vitest.config.ts). The name says the lane; this test checks it against what the
 * file reaches through its relative imports (test helpers, src/, bench/): a unit file reaches no
 * `cloudflare:*` module (bindings, SELF, sockets, the Durable Object class) and no value a global
 * setup provides (vitest's `inject`); a workerd file reaches one of them, or it belongs in Node.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const UNIT = /\.unit\.test\.ts$/;
const INJECT = /import\s*(?:type\s*)?\{[^}]*\binject\b[^}]*\}\s*from\s*["']vitest["']/;

/** The file a relative specifier names, as vite resolves it (a `?raw` query dropped), or undefined for a non-module file. */
function resolveModule(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier.replace(/\?.*$/, ""));
  const candidates = [base, `${base}.ts`, join(base, "index.ts"), base.replace(/\.js$/, ".ts")];
  const file = candidates.find((c) => existsSync(c) && statSync(c).isFile());
  if (!file) throw new Error(`${relative(ROOT, from)}: cannot resolve ${specifier}`);
  return /\.(ts|js|mjs)$/.test(file) && !specifier.includes("?") ? file : undefined;
}

/** A module's import specifiers (static, dynamic, re-exports) and whether it reads `inject`, read once. */
const scanned = new Map<string, { specifiers: string[]; injects: boolean }>();
function scan(file: string) {
  let found = scanned.get(file);
  if (!found) {
    const text = readFileSync(file, "utf8");
    const specifiers = ts.preProcessFile(text, true, true).importedFiles.map((i) => i.fileName);
    found = { specifiers, injects: INJECT.test(text) };
    scanned.set(file, found);
  }
  return found;
}

/** What ties `test` to workerd: the import chain to the first `cloudflare:*` import or `inject`, or undefined. */
function workerdNeed(test: string): string | undefined {
  const parent = new Map<string, string | undefined>([[test, undefined]]);
  const chain = (file: string) => {
    const files: string[] = [];
    for (let f: string | undefined = file; f; f = parent.get(f)) files.unshift(relative(ROOT, f));
    return files.join(" → ");
  };
  const queue = [test];
  for (let file = queue.shift(); file; file = queue.shift()) {
    const { specifiers, injects } = scan(file);
    const platform = specifiers.find((s) => s.startsWith("cloudflare:"));
    if (platform) return `${chain(file)} imports ${platform}`;
    if (injects) return `${chain(file)} reads a global setup's values (inject)`;
    for (const specifier of specifiers.filter((s) => s.startsWith("."))) {
      const next = resolveModule(file, specifier);
      if (next && !parent.has(next)) {
        parent.set(next, file);
        queue.push(next);
      }
    }
  }
  return undefined;
}

const tests = readdirSync(join(ROOT, "test"), { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".test.ts"))
  .map((f) => join(ROOT, "test", f))
  .sort();

describe("test lanes", () => {
  it("runs no unit file that needs workerd", () => {
    const misplaced = tests.filter((f) => UNIT.test(f)).flatMap((f) => workerdNeed(f) ?? []);
    expect(misplaced, "these need workerd: name them .test.ts, or keep the binding out of the helper").toEqual([]);
  });

  it("runs no file in workerd that could run in Node", () => {
    const pure = tests.filter((f) => !UNIT.test(f) && workerdNeed(f) === undefined).map((f) => relative(ROOT, f));
    expect(pure, "these run in Node: name them .unit.test.ts").toEqual([]);
  });

  it("sees both lanes", () => {
    expect(tests.filter((f) => UNIT.test(f)).length).toBeGreaterThan(30);
    expect(tests.filter((f) => !UNIT.test(f)).length).toBeGreaterThan(30);
  });
});
