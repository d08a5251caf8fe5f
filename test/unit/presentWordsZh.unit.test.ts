/**
 * The words of present/ that reach a user from below the fronts (the connection's lines, the
 * targets' refusals, the ETA's reasons, the page cache, the hints, the server choice) follow the
 * display language: with the zh-cn bundle they read in Chinese and the English sentence is gone;
 * without a bundle the English is exactly as before.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { useBundle } from '../../src/util/l10n';
import { itReadsInBothLanguages, ZH, type ZhSample } from '../util/zhSamples';
import { connecting, connectionFailed, hostKeyAdded } from '../../src/present/words/connectionWords';
import { noUnitFile, sudoWayOut } from '../../src/present/words/targetWords';
import { overrunReason } from '../../src/present/words/etaWords';
import { predictionText } from '../../src/present/words/pageCacheWords';
import { ACTIVITY_WORDS } from '../../src/present/words/activityWords';
import { connectionRefused } from '../../src/present/words/verifyWords';
import { forFront, HINT_TITLES } from '../../src/present/hints';
import { serverChoiceText } from '../../src/present/serverRefusalText';
import { mcpUsage } from '../../src/fronts/mcp/args';
import { hintMark } from '../../src/util/hintMark';

const ROOT = path.join(__dirname, '..', '..');

/** Each sample: how it is made, its exact English, and Chinese words it must hold under zh-cn. */
const SAMPLES: readonly ZhSample[] = [
  [
    'a connection failure',
    () => connectionFailed('kimi@gpu1:22', 'ECONNREFUSED'),
    'Connection to kimi@gpu1:22 failed: ECONNREFUSED',
    ['连接', '失败'],
  ],
  ['a connection attempt', () => connecting('gpu1', 2), 'Connecting to gpu1 (attempt 2)', ['正在连接', '第 2 次尝试']],
  [
    'a host key added',
    () => hostKeyAdded('ssh-ed25519', 'gpu1', 'SHA256:abc', '/home/u/.ssh/known_hosts'),
    'Added the ssh-ed25519 host key of gpu1 (SHA256:abc) to /home/u/.ssh/known_hosts',
    ['主机密钥', '添加到'],
  ],
  ['a refused request', () => connectionRefused(), 'connection refused', ['连接被拒绝']],
  [
    'a server that is not configured',
    () => serverChoiceText({ reason: 'unknown', name: 'b', known: ['a'] }, 'kimiService.servers'),
    'no server named "b" in kimiService.servers (configured: "a")',
    ['没有名为', '已配置'],
  ],
  [
    'a target refusal',
    () => noUnitFile('sglang.service'),
    'sglang.service: systemd knows no unit file for it (FragmentPath is empty)',
    ['单元文件', '为空'],
  ],
  [
    'an ETA reason',
    () => overrunReason('loading weights', 'history', 95_000),
    'loading weights is taking longer than in previous loads (95 s so far): the estimate grows with it',
    ['已用 95 秒', '估计'],
  ],
  [
    'a page-cache forecast',
    () => predictionText(540_000, 41, 100),
    '~9 min: 41% of the weights are cached',
    ['约 9 分钟', '页缓存'],
  ],
  [
    'a quiet step',
    () => ACTIVITY_WORDS['post-shards'],
    'processing weights after the last shard',
    ['处理最后一个分片'],
  ],
  [
    'a hint in VS Code',
    () => forFront(`no rights${sudoWayOut(hintMark('copy-sudoers-rules'))}`, 'vscode'),
    'no rights Set "sudo": true for this server and "Kimi Service: Copy sudoers rule" copies the sudoers rules that allow exactly the extension\'s commands, or connect as a user who may do this.',
    ['"Kimi Service: 复制 sudoers 规则"', '或以有权执行此操作的用户连接'],
  ],
  [
    'a hint in the CLI',
    () => forFront(hintMark('set-api-key'), 'cli'),
    'set it in KIMI_API_KEY for kimi-service',
    ['KIMI_API_KEY 中设置'],
  ],
];

describe("present's words in the display language", () => {
  itReadsInBothLanguages(SAMPLES);

  it("a hint names each palette command by the title the palette shows in that language (package.nls.zh-cn.json's)", () => {
    const nls = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.nls.zh-cn.json'), 'utf8')) as Record<
      string,
      string
    >;
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      contributes: { commands: { command: string; title: string }[] };
    };
    const titles = manifest.contributes.commands.map((c) => nls[c.title.replace(/^%|%$/g, '')]);
    useBundle(ZH);
    for (const [kind, title] of Object.entries(HINT_TITLES))
      assert.ok(titles.includes(title()), `${kind}: no command's zh-cn title is "${title()}"`);
  });

  it('the MCP server --help: Chinese around the commands, flags and tool names as typed', () => {
    const english = mcpUsage();
    assert.ok(english.startsWith('Usage: kimi-service mcp [--config FILE] [--settings FILE]\n'), english);
    useBundle(ZH);
    const chinese = mcpUsage();
    assert.ok(!chinese.includes('Servers come from'), chinese);
    for (const words of ['用法', '服务器依次来自', 'kimi_verify_parsers', 'claude mcp add kimi -- kimi-service mcp'])
      assert.ok(chinese.includes(words), `${JSON.stringify(words)} in ${chinese}`);
  });
});
