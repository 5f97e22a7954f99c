/**
 * A real Chromium for the explorer test, found without network access at test time:
 *
 * 1. `LEDGER_NODE_CHROMIUM`, when set: the path of a Chromium or Chrome binary.
 * 2. `@sparticuz/chromium` (a devDependency, so `npm ci` brings it): the binary ships inside the npm
 *    package, brotli-compressed, and is unpacked into the temp directory on first use. Its only
 *    non-glibc libraries (NSS, NSPR, expat) ship in the same package and are put on
 *    LD_LIBRARY_PATH, and its fonts are used, so it runs on a bare Debian/Ubuntu as well.
 * 3. A system Chromium (`apt-get install chromium`): /usr/bin/chromium and friends.
 *
 * The first that really starts wins. When none does, `launchBrowser` throws, naming what it tried
 * and why each failed: the explorer test then fails rather than skips.
 */
import chromiumPack from "@sparticuz/chromium";
import { createReadStream, existsSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { createBrotliDecompress } from "node:zlib";
import { chromium, type BrowserContext } from "playwright-core";

/** The launch flags the explorer test is specified with (`--headless` comes from `headless: true`). */
export const BROWSER_FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const SYSTEM_BROWSERS = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"];

interface Candidate {
  source: string;
  /** Resolves the executable (may unpack it). */
  resolve(): Promise<{ executablePath: string; env?: Record<string, string> }>;
}

/** Unpacks the NSS/NSPR/expat libraries that `@sparticuz/chromium` ships for Amazon Linux. */
async function packLibraries(): Promise<string> {
  const out = join(tmpdir(), "ledger-node-chromium-al2023");
  if (existsSync(join(out, "lib", "libnss3.so"))) return join(out, "lib");
  // The package's own files and its own dependency (tar-fs), resolved from the package.
  const packRequire = createRequire(createRequire(import.meta.url).resolve("@sparticuz/chromium"));
  const bin = join(dirname(dirname(dirname(packRequire.resolve("@sparticuz/chromium")))), "bin");
  const { extract } = packRequire("tar-fs") as { extract(dir: string): NodeJS.WritableStream };
  // Unpack into a fresh directory, then move it into place, so a half-unpacked one is never used.
  const partial = mkdtempSync(join(tmpdir(), "ledger-node-chromium-al2023-"));
  await pipeline(createReadStream(join(bin, "al2023.tar.br")), createBrotliDecompress(), extract(partial));
  try {
    renameSync(partial, out);
  } catch {
    rmSync(partial, { recursive: true, force: true }); // another process won the race
  }
  return join(out, "lib");
}

function candidates(): Candidate[] {
  const out: Candidate[] = [];
  const explicit = process.env.LEDGER_NODE_CHROMIUM;
  if (explicit) out.push({ source: `LEDGER_NODE_CHROMIUM=${explicit}`, resolve: async () => ({ executablePath: explicit }) });
  out.push({
    source: "@sparticuz/chromium (npm)",
    async resolve() {
      const executablePath = await chromiumPack.executablePath();
      const lib = await packLibraries();
      const env: Record<string, string> = {
        LD_LIBRARY_PATH: [lib, process.env.LD_LIBRARY_PATH].filter(Boolean).join(":"),
        FONTCONFIG_PATH: join(tmpdir(), "fonts"),
      };
      return { executablePath, env };
    },
  });
  for (const path of SYSTEM_BROWSERS) {
    out.push({ source: `system ${path}`, resolve: async () => ({ executablePath: path }) });
  }
  return out;
}

export interface LaunchedBrowser {
  context: BrowserContext;
  source: string;
  close(): Promise<void>;
}

/** Starts the first browser that works, headless, with a fresh profile. */
export async function launchBrowser(): Promise<LaunchedBrowser> {
  const tried: string[] = [];
  for (const c of candidates()) {
    let profile: string | null = null;
    try {
      const { executablePath, env } = await c.resolve();
      if (!existsSync(executablePath)) {
        tried.push(`${c.source}: not installed`);
        continue;
      }
      profile = mkdtempSync(join(tmpdir(), "ledger-node-browser-profile-"));
      const context = await chromium.launchPersistentContext(profile, {
        executablePath,
        headless: true,
        args: BROWSER_FLAGS,
        env: { ...process.env, ...env } as Record<string, string>,
        viewport: { width: 1280, height: 1000 },
        timeout: 30_000,
      });
      const dir = profile;
      return {
        context,
        source: c.source,
        async close() {
          await context.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    } catch (e) {
      if (profile) rmSync(profile, { recursive: true, force: true });
      tried.push(`${c.source}: ${String((e as Error).message).split("\n")[0]}`);
    }
  }
  throw new Error(
    "No usable Chromium for the explorer test. Tried:\n  " +
      tried.join("\n  ") +
      "\nFix one of: run `npm ci` (installs @sparticuz/chromium), `apt-get install -y chromium`, " +
      "or set LEDGER_NODE_CHROMIUM to a Chromium/Chrome binary.",
  );
}
