/**
 * What the targets and the settings reader say reaches the user in the display language: made by
 * the rooms themselves (a job the controller forgot, a setting a workspace may not choose, a url
 * whose job has no node, a Docker socket that refuses), each reads in Chinese under the zh-cn
 * bundle and exactly as before in English without one.
 */
import { noJobStatus } from '../../src/target/slurm/jobStatus';
import { ignoredSettingsNotice, userOnlyKeysInInspect } from '../../src/config/userOnlySettings';
import { parseSettings } from '../../src/config/parseSettings';
import { urlForNode } from '../../src/config/nodeUrl';
import { dockerAccessHint } from '../../src/target/docker/containerReader';
import { itReadsInBothLanguages, type ZhSample } from '../util/zhSamples';

const server = { name: 'a', host: 'gpu1', unit: 'sglang.service' };

/** Each made by the room itself. */
const SAMPLES: readonly ZhSample[] = [
  [
    'a job the controller forgot, on a cluster without accounting',
    () => noJobStatus('kimi', { kind: 'gone', id: '42', accounting: { kind: 'disabled' } }).notFoundText,
    'job 42 (kimi) is no longer known to the Slurm controller (it ended more than MinJobAge ago; without accounting, sacct cannot say how)',
    ['作业 42', 'MinJobAge', '没有记账记录'],
  ],
  [
    'a user-only setting set by a workspace',
    () => ignoredSettingsNotice(userOnlyKeysInInspect('servers', { workspaceValue: [] })).logLines[0],
    'Settings: ignored kimiService.servers from workspace settings (read from the user or remote settings only: it chooses the hosts, the login, the identity file, sudo, the unit, the container and the URL).',
    ['忽略了来自 工作区设置 的 kimiService.servers', '决定主机'],
  ],
  [
    'a server name given twice',
    () => {
      const result = parseSettings({ servers: [server, server] });
      return result.ok ? undefined : result.errors[0];
    },
    'kimiService.servers: the name "a" is used twice.',
    ['名称 "a" 被使用了两次'],
  ],
  [
    'a url whose job runs on no node',
    () => {
      const url = urlForNode('http://{node}:30001', undefined);
      return 'problem' in url ? url.problem : undefined;
    },
    "http://{node}:30001 names the job's node, and the job runs on no node now (it waits in the queue, or it has ended)",
    ['http://{node}:30001', '不在任何节点上运行'],
  ],
  [
    'a Docker socket refusing the login user',
    () => dockerAccessHint('permission denied while trying to connect to the docker daemon socket', false, 'gpu1'),
    'the login user may not use Docker on gpu1: add it to the docker group (sudo usermod -aG docker USER, then log in again) or set "sudo": true',
    ['登录用户无权在 gpu1 上使用 Docker', 'docker 组'],
  ],
];

describe("the targets' and the settings' words in the display language", () => {
  itReadsInBothLanguages(SAMPLES);
});
