/**
 * Every command-line option as an environment variable too, so secrets (an API key, a database URL
 * with its password) need not stand in argv where `ps` shows them. One rule names them all:
 * `--prune-window` is `LEDGER_NODE_PRUNE_WINDOW`, `--no-prune` is `LEDGER_NODE_NO_PRUNE`.
 */
import { type Command, InvalidArgumentError, type Option } from "commander";

/** How a switch's variable (an option without a value) is spelled: true as if the flag were given. */
const SWITCH_SPELLINGS: Record<string, boolean> = { true: true, "1": true, false: false, "0": false };

/** The variable of `option`: `prefix`, then its long flag without dashes, upper-cased, `-` as `_`. */
export function variableOf(prefix: string, option: Option): string | undefined {
  return option.long && prefix + option.long.slice(2).replaceAll("-", "_").toUpperCase();
}

/**
 * Gives every option of `program`'s commands a variable (`variableOf`, shown by `--help` as
 * `(env: …)`); call it once all are defined, so an option added anywhere is covered. A flag wins
 * over its variable, and an empty variable counts as unset. A value goes through the flag's own
 * parser; a switch takes `SWITCH_SPELLINGS`. A refused value stops the command with one line
 * naming the variable, exit code 1, as a refused flag does.
 */
export function optionsFromEnvironment(program: Command, prefix: string): void {
  for (const cmd of program.commands) {
    for (const option of cmd.options) {
      const variable = variableOf(prefix, option);
      if (variable === undefined) continue;
      option.env(variable);
      // Commander emits this for a set variable whose option no flag gave; its own listener, added
      // only for options defined with .env(), would take any value as "on" for a switch.
      cmd.on(`optionEnv:${option.name()}`, () => {
        const raw = process.env[variable];
        if (!raw) return;
        const key = option.attributeName();
        if (!option.required && !option.optional) {
          const on = SWITCH_SPELLINGS[raw];
          if (on === undefined) cmd.error(`error: ${variable} must be true or 1 (as ${option.long}) or false or 0 (as without it), got ${JSON.stringify(raw)}`);
          if (on) cmd.setOptionValueWithSource(key, !option.negate, "env");
          return;
        }
        let value: unknown = raw;
        try {
          if (option.parseArg) value = option.parseArg(raw, cmd.getOptionValue(key));
          else if (option.variadic) value = [raw];
        } catch (e) {
          if (e instanceof InvalidArgumentError) cmd.error(`error: ${variable}: ${e.message}`, { exitCode: e.exitCode, code: e.code });
          throw e;
        }
        cmd.setOptionValueWithSource(key, value, "env");
      });
    }
  }
}
