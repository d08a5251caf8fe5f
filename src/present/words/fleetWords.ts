/** The fleet's refusals in words: a load advice that cannot be applied, a server that cannot be discovered. */

/** The unit's command line holds no command of the engines named (`engines`: "SGLang or vLLM"). */
export function noServerCommandLine(unit: string, engines: string, argv: string): string {
  return `${unit}: no ${engines} server command in its command line (${argv})`;
}

export function notACommandLineChange(title: string, action: string): string {
  return `"${title}" is not a command-line change: ${action}`;
}

export function cannotApply(title: string, why: string): string {
  return `"${title}" cannot be applied: ${why}`;
}

export function cannotReachHost(host: string, why: string | undefined): string {
  return `cannot reach ${host}: ${why}`;
}

export function cannotListUnits(host: string, why: string): string {
  return `cannot list the units of ${host}: ${why}`;
}

export function entryInvalid(name: string, why: string | undefined): string {
  return `the entry for ${name} would not be valid: ${why}`;
}
