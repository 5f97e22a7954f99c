/** Which process holds a connection's server end (Linux /proc), for tests of `serve --workers`. */
import { existsSync, readFileSync, readdirSync, readlinkSync } from "node:fs";

/** The one of `pids` holding the server end of the connection whose client end is `clientPort` on this host: its socket inode in the TCP tables, then the process with that inode among its fds. */
export function serverOf(clientPort: number, pids: number[]): number | undefined {
  let inode: string | undefined;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && parseInt(f[2]!.split(":")[1]!, 16) === clientPort && f[9] !== "0") inode = f[9];
    }
  }
  if (!inode) return undefined;
  for (const pid of pids) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`) return pid;
      }
    } catch {
      // gone
    }
  }
  return undefined;
}
