/**
 * Commits to a SQLite file told by the file system (docs/decisions.md §24): in WAL mode every
 * commit, by any process, writes to `<file>-wal`, and a watch of the file's directory (inotify on
 * Linux) sees the write. The directory is watched, not the file: no file of the database is opened
 * here, and a WAL file made after the watch began is seen too. A checkpoint's writes to the
 * database file itself are not commits and are not told.
 */
import { type FSWatcher, realpathSync, watch } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import type { CommitSignal, CommitWatch } from "../contracts/reader.js";

export class WalSignal implements CommitSignal {
  constructor(private readonly path: string) {}

  watch(onCommit: (version: null) => void, onLost?: (reason: string) => void): CommitWatch {
    const file = realFile(this.path);
    const wal = `${basename(file)}-wal`;
    let watcher: FSWatcher | null = null;
    try {
      // `persistent: false`: a watch never keeps the process alive. A name the platform does not give is told too.
      watcher = watch(dirname(file), { persistent: false }, (_event, name) => {
        if (name === null || name === wal) onCommit(null);
      });
      watcher.on("error", (e) => {
        watcher?.close();
        watcher = null;
        onLost?.(`the watch of ${dirname(file)} failed: ${e.message}`);
      });
    } catch (e) {
      // No watch to be had (such as no inotify watches left): the watcher polls instead.
      watcher = null;
      onLost?.(`cannot watch ${dirname(file)}: ${(e as Error).message}`);
    }
    return {
      get live() {
        return watcher !== null;
      },
      stop() {
        watcher?.close();
        watcher = null;
      },
    };
  }
}

/** The file a path names, its symbolic links followed: SQLite keeps the WAL beside that file. */
function realFile(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}
