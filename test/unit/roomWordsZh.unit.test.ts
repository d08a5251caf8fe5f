/**
 * What the rooms below present/ say reaches the user in the display language: made by the rooms
 * themselves (an agent's restart to confirm, a job the controller forgot, a setting a workspace
 * may not choose, a url whose job has no node, a Docker socket that refuses, a port forward, a
 * rolling restart, a broker folder), each reads in Chinese under the zh-cn bundle and exactly as
 * before in English without one.
 */
import { noJobStatus } from '../../src/target/slurm/jobStatus';
import { ignoredSettingsNotice, userOnlyKeysInInspect } from '../../src/config/userOnlySettings';
import { parseSettings } from '../../src/config/parseSettings';
import { urlForNode } from '../../src/config/nodeUrl';
import { dockerAccessHint } from '../../src/target/docker/containerReader';
import { openedLine, portNote, prohibitedError } from '../../src/fleet/forward/forwardPlan';
import { rollSummary } from '../../src/fleet/restart/rolling';
import { unsafeDirReason } from '../../src/broker/socketDir';
import { restartQuestion } from '../../src/agent/confirmation';
import type { ServerProfile } from '../../src/config/config';
import { itReadsInBothLanguages, type ZhSample } from '../util/zhSamples';

const server = { name: 'a', host: 'gpu1', unit: 'sglang.service' };
const target = { host: '127.0.0.1', port: 30000, path: '' };

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
  [
    'an open forward on another port',
    () =>
      openedLine({
        server: 'gpu1',
        localPort: 18000,
        remote: '127.0.0.1:30000',
        baseUrl: 'http://127.0.0.1:18000/v1',
        portNote: portNote(target, 18000, false)!,
      }),
    "Forwarding 127.0.0.1:18000 on this machine to 127.0.0.1:30000 on gpu1's host (port 30000 is taken on this machine, so 18000 was chosen). Base URL: http://127.0.0.1:18000/v1",
    ['转发到 gpu1 所在主机上的 127.0.0.1:30000', '已被占用', 'http://127.0.0.1:18000/v1'],
  ],
  [
    'a host that forbids forwarding',
    () => prohibitedError({ name: 'gpu1', host: 'gpu1.lab' }).message,
    'cannot forward a port to gpu1: the SSH server of gpu1.lab forbids TCP forwarding (AllowTcpForwarding no: "administratively prohibited"), so no connection from this machine can reach the model server through SSH. Watching and restarting still work (they run curl on the host). To use the server from this machine, allow forwarding for your login in the host\'s sshd_config (e.g. "Match User <you>" + "AllowTcpForwarding local") and reload sshd.',
    ['端口转发', '禁止 TCP 转发', 'sshd_config'],
  ],
  [
    'a rolling restart stopped',
    () => rollSummary({ kind: 'failed', server: 'b', reason: 'it failed', restarted: ['a'], skipped: ['c'] }),
    'Rolling restart stopped at b: it failed. A restarted, ready and verified. Not restarted: c.',
    ['滚动重启在 b 处停止', '未重启：c'],
  ],
  [
    'a broker folder of another user',
    () => unsafeDirReason({ isSymbolicLink: () => false, isDirectory: () => true, uid: 1001, mode: 0o40700 }, 1000)!,
    'belongs to uid 1001, not 1000',
    ['属于 uid 1001'],
  ],
  [
    "an agent's restart, as the user is asked to confirm it",
    () =>
      restartQuestion(
        { name: 'gpu1', unit: 'sglang.service', host: 'gpu1.lab' } as ServerProfile,
        '9 min',
        false,
      ).lines.join(' '),
    'The model server sglang.service on gpu1 (gpu1.lab) stops now and is unavailable until it has loaded again. Expected load time: 9 min. If a load is already under way (someone else restarted it moments ago), it is followed instead of restarted again.',
    ['gpu1（gpu1.lab）上的模型服务 sglang.service 将立即停止', '预计加载时间：9 min', '跟踪这次加载'],
  ],
];

describe('the words of the targets, the settings, the forward, the rolling restart and the broker in the display language', () => {
  itReadsInBothLanguages(SAMPLES);
});
