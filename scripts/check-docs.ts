/**
 * Checks the documentation (`npm run lint:docs`, in CI):
 *   - every relative link in README.md, docs/**, bench/README.md and bench/log/** reaches a file or
 *     folder of the repository, and its #anchor a heading of the markdown file it names;
 *   - no link leaves the repository (an absolute path, `file:`, or `..` past the root), and no page
 *     names a path of the machine it was written on (`/work/…`, `../shared/…`);
 *   - README.md stays a five-minute read (at most 200 lines);
 *   - every heading README.md had before its sections moved to docs/ (issue 36) is still there, on
 *     the page listed below, and that page is reachable from README.md through links;
 *   - a page of docs/ or bench/ that code cites (`docs/api.md, "Errors"`, `README "Quick start"`)
 *     exists, and so does the heading it names.
 * Exits 1 with one line per problem.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const README_MAX_LINES = 200;

/**
 * The README's headings before the move, and the page (and heading there) each one lives on now.
 * The curl tour's `# 1. …` lines are comments inside a code block, not headings.
 */
const MOVED_HEADINGS: { was: string; page: string; now?: string }[] = [
  { was: "dq-monitor — data quality monitoring API", page: "README.md" },
  { was: "Quick start", page: "README.md" },
  { was: "Dashboard", page: "docs/dashboard.md" },
  { was: "A first session with curl", page: "README.md" },
  { was: "Deploy", page: "docs/operations.md" },
  { was: "What an account needs", page: "docs/operations.md" },
  { was: "`npm run deploy -- --env <name>` (scripts/deploy.ts)", page: "docs/operations.md" },
  { was: "Environments", page: "docs/operations.md" },
  { was: "Checks in CI (no account)", page: "docs/operations.md" },
  { was: "Upgrading a running deployment", page: "docs/operations.md" },
  { was: "What it costs", page: "docs/operations.md" },
  { was: "Layout", page: "docs/architecture.md" },
  { was: "Decisions", page: "docs/resources/README.md", now: "Decisions, resource by resource" },
  { was: "Authentication", page: "docs/api.md" },
  { was: "Roles and permissions", page: "docs/api.md" },
  { was: "Errors", page: "docs/api.md" },
  { was: "Tenants", page: "docs/resources/tenants.md" },
  { was: "Retention (`data_ttl`)", page: "docs/resources/retention.md" },
  { was: "Lists and deprecations", page: "docs/api.md" },
  { was: "Read replicas and bookmarks (`X-Session-Bookmark`)", page: "docs/api.md" },
  { was: "Connections", page: "docs/resources/connections.md" },
  { was: "Assets", page: "docs/resources/assets.md" },
  { was: "Source groups (deprecated)", page: "docs/resources/source-groups.md" },
  {
    was: "Spark job configuration, ticket templates, DQ score configuration",
    page: "docs/resources/settings.md",
  },
  { was: "Scans", page: "docs/resources/scans.md" },
  { was: "Light and full scans", page: "docs/resources/light-and-full-scans.md" },
  { was: "Policies, alerts and the DQ score", page: "docs/resources/alerts-and-dq-score.md" },
  { was: "Incidents", page: "docs/resources/incidents.md" },
  { was: "Notifications", page: "docs/resources/notifications.md" },
  { was: "Schedules", page: "docs/resources/schedules.md" },
  { was: "Benchmarks", page: "bench/README.md" },
  { was: "Security", page: "docs/security.md" },
  { was: "Secrets and configuration", page: "docs/operations.md" },
  { was: "Outbound requests and upstream errors", page: "docs/security.md" },
  { was: "Dependencies", page: "docs/development.md" },
];

/** Paths of the machine the docs were written on, which a reader of the repository does not have. */
const FOREIGN_PATHS = [/\.\.\/shared\//, /(^|[\s(`'"])\/work\//, /(^|[\s(`'"])\/home\//, /file:\/\//];

interface Page {
  /** Headings' anchors, as GitHub makes them. */
  anchors: Set<string>;
  /** Link targets outside code, with their line numbers. */
  links: { target: string; line: number }[];
  text: string;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens (github-slugger). */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}

/** Headings and links of a markdown text, code blocks and inline code left out. */
function parsePage(text: string): Page {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const links: Page["links"] = [];
  let fence: string | undefined;
  text.split("\n").forEach((raw, i) => {
    const opener = /^\s*(```+|~~~+)/.exec(raw)?.[1];
    if (opener !== undefined) {
      if (fence === undefined) fence = opener[0];
      else if (opener[0] === fence) fence = undefined;
      return;
    }
    if (fence !== undefined) return;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw)?.[1];
    if (heading !== undefined) {
      const base = slug(heading);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    const line = raw.replace(/`[^`]*`/g, "");
    for (const m of line.matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ target: m[1]!, line: i + 1 });
    }
  });
  return { anchors, links, text };
}

function markdownFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return markdownFiles(path);
    return e.name.endsWith(".md") ? [path] : [];
  });
}

/** Folders whose source files may cite the docs; generated and installed files are left out. */
const CITING_FOLDERS = [
  "src",
  "scripts",
  "bench",
  "cli",
  "app",
  "spark",
  "test",
  "test-node",
  "test-deploy",
  ".github",
];
const CITING_FILE = /\.(ts|tsx|mjs|cjs|js|py|ya?ml)$/;

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === "node_modules" || e.name.startsWith(".data") ? [] : sourceFiles(path);
    return CITING_FILE.test(e.name) ? [path] : [];
  });
}

/**
 * Citations of the docs in code: `docs/<page>.md` or `bench/…md`, optionally followed by a quoted
 * heading (`docs/api.md, "Errors"`), and `README "<heading>"`. Each page must exist, and each
 * quoted heading must be one of its headings.
 */
function checkCitations(root: string, pageOf: (abs: string) => Page | undefined): string[] {
  const problems: string[] = [];
  const cites = [
    /\b((?:docs|bench)\/[\w./-]*?\.md)(?:'s)?(?:,?\s*\(?"([^"\n]+)")?/g,
    /\b(README)(?:\.md)?(?:'s)?,?\s*\(?"([^"\n]+)"/g,
  ];
  const citing = CITING_FOLDERS.flatMap((d) => sourceFiles(join(root, d)));
  // This file names pages and headings as data, not as citations.
  for (const file of citing.filter((f) => f !== join(root, "scripts", "check-docs.ts"))) {
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        for (const cite of cites) {
          for (const m of line.matchAll(cite)) {
            const path = m[1] === "README" ? "README.md" : m[1]!;
            const page = pageOf(join(root, path));
            const where = `${relative(root, file).split(sep).join("/")}:${i + 1}`;
            if (!page) problems.push(`${where}: cites ${path}, which does not exist`);
            else if (m[2] !== undefined && !page.anchors.has(slug(m[2]))) {
              problems.push(`${where}: cites "${m[2]}" in ${path}, which has no such heading`);
            }
          }
        }
      });
  }
  return problems;
}

/** Every problem of the documentation under `root`, one line each. */
function checkDocs(root: string): string[] {
  const files = [
    join(root, "README.md"),
    join(root, "bench", "README.md"),
    ...markdownFiles(join(root, "docs")),
    ...markdownFiles(join(root, "bench", "log")),
  ].filter((f) => existsSync(f));
  const pages = new Map(files.map((f) => [f, parsePage(readFileSync(f, "utf8"))]));
  const pageOf = (abs: string) => {
    if (!pages.has(abs) && abs.endsWith(".md") && existsSync(abs) && statSync(abs).isFile()) {
      pages.set(abs, parsePage(readFileSync(abs, "utf8")));
    }
    return pages.get(abs);
  };
  const problems: string[] = [];
  const rel = (abs: string) => relative(root, abs).split(sep).join("/");
  /** The markdown pages each page links to, for the reachability walk. */
  const edges = new Map<string, string[]>();

  for (const file of files) {
    const page = pages.get(file)!;
    const where = (line: number) => `${rel(file)}:${line}`;
    page.text.split("\n").forEach((line, i) => {
      if (FOREIGN_PATHS.some((p) => p.test(line))) {
        problems.push(`${where(i + 1)}: names a path outside the repository: ${line.trim()}`);
      }
    });
    const targets: string[] = [];
    for (const { target, line } of page.links) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
        if (/^(https?|mailto):/i.test(target)) continue;
        problems.push(`${where(line)}: link to ${target} leaves the repository`);
        continue;
      }
      if (target.startsWith("/")) {
        problems.push(`${where(line)}: link to ${target} is an absolute path; use a relative one`);
        continue;
      }
      const [path = "", anchor] = target.split("#", 2);
      const abs = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
      if (abs !== root && !abs.startsWith(root + sep)) {
        problems.push(`${where(line)}: link to ${target} leaves the repository`);
        continue;
      }
      if (!existsSync(abs)) {
        problems.push(`${where(line)}: link to ${target}: ${rel(abs)} does not exist`);
        continue;
      }
      const linked = pageOf(abs);
      if (linked) targets.push(abs);
      if (anchor !== undefined && anchor !== "") {
        if (!linked) problems.push(`${where(line)}: link to ${target}: an anchor into a file that is not markdown`);
        else if (!linked.anchors.has(anchor.toLowerCase())) {
          problems.push(`${where(line)}: link to ${target}: ${rel(abs)} has no heading #${anchor}`);
        }
      }
    }
    edges.set(file, targets);
  }

  problems.push(...checkCitations(root, pageOf));

  const readme = join(root, "README.md");
  const readmeLines = pages.get(readme)?.text.replace(/\n$/, "").split("\n").length ?? 0;
  if (readmeLines > README_MAX_LINES) {
    problems.push(`README.md: ${readmeLines} lines, more than ${README_MAX_LINES}: move the detail to docs/`);
  }

  const reachable = new Set<string>([readme]);
  for (let queue = [readme], next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const to of edges.get(next) ?? []) {
      if (reachable.has(to)) continue;
      reachable.add(to);
      if (!edges.has(to)) edges.set(to, []);
      queue.push(to);
    }
  }
  for (const { was, page, now } of MOVED_HEADINGS) {
    const abs = join(root, page);
    const found = pageOf(abs);
    if (!found) {
      problems.push(`README heading "${was}": ${page} does not exist`);
    } else if (!found.anchors.has(slug(now ?? was))) {
      problems.push(`README heading "${was}": ${page} has no heading "${now ?? was}"`);
    } else if (!reachable.has(abs)) {
      problems.push(`README heading "${was}": ${page} is not reachable from README.md through links`);
    }
  }
  return problems;
}

const problems = checkDocs(ROOT);
for (const p of problems) console.error(p);
console.log(
  problems.length === 0
    ? `docs: every link resolves; the README's ${MOVED_HEADINGS.length} former headings are reachable from it`
    : `docs: ${problems.length} problem(s)`,
);
process.exit(problems.length === 0 ? 0 : 1);
