/**
 * Recognises a unit whose ExecStart runs a container (`docker run --name NAME ...`, foreground
 * or `-d`, or `docker start -a NAME`): such a unit is watched through its container. Pure.
 */
import { DOCKER_NAME } from './dockerTarget';
import { dockerRunUnnamed, dockerStartUnnamed } from '../../present/words/dockerWords';

export interface WrappedContainer {
  readonly name: string;
  /** `docker run -d`: the unit's process only starts the container (RemainAfterExit=yes keeps the unit active). */
  readonly detached: boolean;
}

export type WrappedContainerResult =
  | { readonly kind: 'container'; readonly container: WrappedContainer }
  | { readonly kind: 'unnamed'; readonly message: string }
  | undefined;

function isDocker(program: string | undefined): boolean {
  return program !== undefined && /(^|\/)(docker|podman)$/.test(program);
}

/** `docker run` / `docker container run` / `docker start` in ExecStart; undefined when it runs something else. */
export function wrappedContainer(argv: readonly string[]): WrappedContainerResult {
  if (!isDocker(argv[0])) return undefined;
  let i = 1;
  if (argv[i] === 'container') i++;
  const verb = argv[i];
  if (verb !== 'run' && verb !== 'start') return undefined;
  const rest = argv.slice(i + 1);
  if (verb === 'start') {
    const name = [...rest].reverse().find((a) => !a.startsWith('-'));
    if (name === undefined || !DOCKER_NAME.test(name)) return { kind: 'unnamed', message: dockerStartUnnamed() };
    return {
      kind: 'container',
      container: {
        name,
        detached: !rest.some((a) => a === '-a' || a === '--attach' || (/^-[ai]+$/.test(a) && a.includes('a'))),
      },
    };
  }
  let name: string | undefined;
  let detached = false;
  for (let j = 0; j < rest.length; j++) {
    const a = rest[j] ?? '';
    if (a === '--name') name = rest[j + 1];
    else if (a.startsWith('--name=')) name = a.slice('--name='.length);
    else if (a === '--detach' || a === '--detach=true' || (/^-[itPd]+$/.test(a) && a.includes('d'))) detached = true;
  }
  if (name === undefined || !DOCKER_NAME.test(name)) {
    return { kind: 'unnamed', message: dockerRunUnnamed() };
  }
  return { kind: 'container', container: { name, detached } };
}
