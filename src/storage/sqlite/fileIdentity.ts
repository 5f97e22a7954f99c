/**
 * Whether the database file at a path is still the one a connection has open: a file deleted or
 * replaced under a writer would take its commits into an unlinked file the next start never sees.
 */
import { statSync } from "node:fs";

function fileIdOf(path: string): { dev: number; ino: number } | null {
  try {
    const st = statSync(path);
    return { dev: st.dev, ino: st.ino };
  } catch {
    return null;
  }
}

/** Device and inode of a file as opened, checked against what its path leads to now. */
export class FileIdentity {
  private readonly opened: { dev: number; ino: number } | null;

  constructor(private readonly path: string) {
    this.opened = path === ":memory:" ? null : fileIdOf(path);
  }

  /**
   * Why the path no longer leads to the file as opened (deleted, or replaced by a copy), or null
   * when it does. One stat call: cheap enough for every commit and the health check.
   */
  problem(): string | null {
    if (!this.opened) return null;
    const now = fileIdOf(this.path);
    if (!now) return `the database file ${this.path} was deleted while it was open`;
    if (now.dev !== this.opened.dev || now.ino !== this.opened.ino) {
      return `the database file ${this.path} was replaced by another file while it was open (inode ${this.opened.ino} -> ${now.ino})`;
    }
    return null;
  }
}
