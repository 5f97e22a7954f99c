import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { afterEach, describe, expect, it } from "vitest";
import { optionsFromEnvironment, variableOf } from "./cliEnvironment.js";

const PREFIX = "CLI_ENV_TEST_";
const set: string[] = [];

function env(vars: Record<string, string>): void {
  for (const [name, value] of Object.entries(vars)) {
    process.env[PREFIX + name] = value;
    set.push(PREFIX + name);
  }
}

afterEach(() => {
  for (const name of set.splice(0)) delete process.env[name];
});

function port(v: string): number {
  if (!/^[0-9]+$/.test(v) || Number(v) > 65535) throw new InvalidArgumentError(`port must be an integer from 0 to 65535, got ${JSON.stringify(v)}`);
  return Number(v);
}

/** A program of one command, `run`, with an option of each kind; `parse` returns what its action got, or the error it stopped with and what it printed. */
function program() {
  const printed: string[] = [];
  const p = new Command().exitOverride().configureOutput({ writeErr: (s) => printed.push(s), writeOut: (s) => printed.push(s) });
  let got: Record<string, unknown> = {};
  const run = p
    .command("run")
    .requiredOption("--db <path>", "the database")
    .option("--port <port>", "a port", port, 8080)
    .option("--quiet", "a switch", false)
    .option("--no-prune", "a negated switch")
    .option("--tag <tags...>", "a list")
    .option("-v", "a short flag only")
    .addOption(new Option("--mode <mode>", "one of a choice").choices(["fast", "safe"]))
    .action((o) => {
      got = o;
    });
  optionsFromEnvironment(p, PREFIX);
  return {
    run,
    printed,
    parse(args: string[]): { got: Record<string, unknown> } | { error: CommanderError; printed: string } {
      try {
        p.parse(["run", ...args], { from: "user" });
        return { got };
      } catch (e) {
        if (!(e instanceof CommanderError)) throw e;
        return { error: e, printed: printed.join("") };
      }
    },
  };
}

describe("optionsFromEnvironment", () => {
  it("names each option's variable by one rule, from its long flag, and --help shows it", () => {
    const { run } = program();
    const names = run.options.map((o) => variableOf(PREFIX, o));
    expect(names).toEqual([`${PREFIX}DB`, `${PREFIX}PORT`, `${PREFIX}QUIET`, `${PREFIX}NO_PRUNE`, `${PREFIX}TAG`, undefined, `${PREFIX}MODE`]);
    const help = run.helpInformation().replace(/\s+/g, " ");
    for (const name of names.filter(Boolean)) expect(help).toContain(`env: ${name}`);
  });

  it("takes a value from its variable through the flag's own parser, a required option's too", () => {
    env({ DB: "postgres://u:secret@db/ledger", PORT: "9090", MODE: "safe" });
    expect(program().parse([])).toEqual({ got: { db: "postgres://u:secret@db/ledger", port: 9090, quiet: false, prune: true, mode: "safe" } });
  });

  it("a flag wins over its variable, which is then not even parsed", () => {
    env({ DB: "/from/variable", PORT: "not-a-port", QUIET: "maybe" });
    expect(program().parse(["--db", "/from/flag", "--port", "7", "--quiet"])).toMatchObject({ got: { db: "/from/flag", port: 7, quiet: true } });
  });

  it("an empty variable counts as unset: the default stays, a required option is still missing", () => {
    env({ PORT: "", QUIET: "", NO_PRUNE: "" });
    expect(program().parse(["--db", "x"])).toMatchObject({ got: { port: 8080, quiet: false, prune: true } });
    env({ DB: "" });
    const r = program().parse([]);
    expect(r).toMatchObject({ error: { exitCode: 1 }, printed: "error: required option '--db <path>' not specified\n" });
  });

  it("a switch's variable: true or 1 gives the flag, false or 0 leaves it out, for --x and --no-x alike", () => {
    for (const [spelling, on] of [["true", true], ["1", true], ["false", false], ["0", false]] as const) {
      env({ DB: "x", QUIET: spelling, NO_PRUNE: spelling });
      expect(program().parse([]), spelling).toMatchObject({ got: { quiet: on, prune: !on } });
    }
  });

  it("refuses a bad value, a bad choice and a bad switch spelling with one line naming the variable, exit code 1", () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ PORT: "abc" }, `error: ${PREFIX}PORT: port must be an integer from 0 to 65535, got "abc"\n`],
      [{ MODE: "quick" }, `error: ${PREFIX}MODE: Allowed choices are fast, safe.\n`],
      [{ QUIET: "yes" }, `error: ${PREFIX}QUIET must be true or 1 (as --quiet) or false or 0 (as without it), got "yes"\n`],
      [{ NO_PRUNE: "TRUE" }, `error: ${PREFIX}NO_PRUNE must be true or 1 (as --no-prune) or false or 0 (as without it), got "TRUE"\n`],
    ];
    for (const [vars, line] of cases) {
      env({ DB: "x", ...vars });
      const r = program().parse([]);
      expect(r).toMatchObject({ error: { exitCode: 1 }, printed: line });
      for (const name of Object.keys(vars)) delete process.env[PREFIX + name];
    }
  });

  it("a variadic option takes its variable as one value; flags still win", () => {
    env({ DB: "x", TAG: "a b" });
    expect(program().parse([])).toMatchObject({ got: { tag: ["a b"] } });
    expect(program().parse(["--tag", "c", "d"])).toMatchObject({ got: { tag: ["c", "d"] } });
  });
});
