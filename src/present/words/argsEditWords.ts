/**
 * Why a change of the server's arguments (the parser flags, an advice) cannot be written into a
 * compose file or a batch script, and what a plain container needs instead: the file, the service,
 * the flags (`flags`, as the planner labels them) are the facts; the sentence is here.
 */
import * as l10n from '@vscode/l10n';

/** How a compose `command:` is written, when it is no list of plain words (the end of `composeCommandIs`). */
export type ComposeCommandShape = 'list-not-words' | 'quoted-string' | 'neither';

function shapeWords(shape: ComposeCommandShape): string {
  switch (shape) {
    case 'list-not-words':
      return l10n.t('a list with something else than plain words');
    case 'quoted-string':
      return l10n.t('a string with quotes or variables (use the list form, or add the flags by hand)');
    case 'neither':
      return l10n.t('neither a list nor a string');
  }
}

export function composeNotYaml(file: string, error: string): string {
  return l10n.t('{0} is not valid YAML: {1}', file, error);
}

export function composeNoService(file: string, service: string): string {
  return l10n.t('{0} has no service "{1}" under services:', file, service);
}

export function composeNoCommand(service: string, file: string): string {
  return l10n.t(
    "services.{0} in {1} has no command: (the image's default runs): add the SGLang command line as its command, then enable the parsers",
    service,
    file,
  );
}

export function composeCommandIs(service: string, file: string, shape: ComposeCommandShape): string {
  return l10n.t('services.{0}.command in {1} is {2}', service, file, shapeWords(shape));
}

/** `command`: the service's entrypoint and command joined (cut short by the caller). */
export function composeNoServerCommand(service: string, file: string, command: string): string {
  return l10n.t(
    'no "python -m sglang.launch_server" or "sglang serve" in services.{0} of {1}: {2}',
    service,
    file,
    command,
  );
}

export function composeFlagsInEntrypoint(service: string, file: string): string {
  return l10n.t('the flags to change are in services.{0}.entrypoint of {1}: change them there by hand', service, file);
}

export function composeLaidOutOtherwise(service: string, file: string, flags: string): string {
  return l10n.t(
    'services.{0}.command in {1} is laid out in a way Kimi does not rewrite: add {2} by hand',
    service,
    file,
    flags,
  );
}

/** A plain container whose server command is not found: the flags go into its `docker run` by hand. */
export function containerAddByHand(container: string, flags: string): string {
  return l10n.t(
    "A container's command cannot be changed in place. Add {0} to the SGLang command at the end of the `docker run` that creates {1} (after the image name), then recreate it: docker rm -f {1}, and that docker run again.",
    flags,
    container,
  );
}

export function containerAlreadyRuns(container: string, flags: string): string {
  return l10n.t('{0} already runs with {1}.', container, flags);
}

/** A plain container: its whole new command (`command`, quoted for a shell) to run again by hand. */
export function containerRecreateWith(container: string, command: string, flags: string): string {
  return l10n.t(
    'A container\'s command cannot be changed in place. Recreate {0} (docker rm -f {0}, then its docker run) with this command after the image name:\n{1}\n(that is, add {2}). Or run it from a compose file ("compose" in kimiService.servers): Kimi then edits the file and recreates the service.',
    container,
    command,
    flags,
  );
}

export function scriptNoServerCommand(file: string, flags: string): string {
  return l10n.t(
    'no "python -m sglang.launch_server", "sglang serve" or "vllm serve" command in {0}: add {1} to the server\'s command by hand',
    file,
    flags,
  );
}

export function scriptFlagsDiffer(file: string, flags: string): string {
  return l10n.t(
    "the server's command in {0} has some of {1} with other values: change them there by hand",
    file,
    flags,
  );
}

export function scriptWrittenOtherwise(file: string, flags: string): string {
  return l10n.t("the server's command in {0} is written in a way Kimi does not rewrite: add {1} by hand", file, flags);
}

/** The command line has no server command to change: `names`, the commands looked for; `argv`, its start. */
export function noServerCommandIn(names: string, argv: string): string {
  return l10n.t('no {0} in ExecStart: {1}', names, argv);
}
