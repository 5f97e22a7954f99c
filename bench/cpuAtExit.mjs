// Preloaded by bench/import.bench.ts: the process's CPU time (every thread) on stderr at exit.
process.on("exit", () => {
  const u = process.cpuUsage();
  process.stderr.write(`cpu-us ${u.user + u.system}\n`);
});
