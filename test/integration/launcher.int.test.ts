/**
 * The `kimi-service` launcher for real: written into a bin folder for an installed extension
 * (a copy of the built dist/ in a version folder whose path has spaces, quotes, `$` and
 * backquotes), then an MCP client started from the configuration "Copy MCP configuration" gives
 * (`kimi-service mcp`, found through PATH) lists and calls the tools; after an update (another
 * version folder, the old one removed) the launcher is refreshed as at activation and the same
 * configuration still connects. A launcher the user removed is not written again.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { installLauncher, readLauncher, refreshLauncher } from '../../src/fronts/vscode/launcher/launcherFile';
import { dirOnPath, launcherCommandFor, type LauncherTarget } from '../../src/fronts/vscode/launcher/launcherScript';
import { launcherMcpEntry, mcpConfigText, type McpServerEntry } from '../../src/fronts/mcp/clientConfig';
import { version } from '../../package.json';

const REPO = path.resolve(__dirname, '..', '..');
const TOOLS = ['kimi_logs', 'kimi_restart', 'kimi_status', 'kimi_verify_parsers', 'kimi_wait'];

describe('the kimi-service launcher: an MCP client through `kimi-service mcp`, across an update', function () {
  this.timeout(60_000);
  let root: string;
  let binDir: string;
  let launcher: string;
  let env: Record<string, string>;
  /** The MCP configuration as "Copy MCP configuration" writes it once the launcher is installed. */
  let config: McpServerEntry;

  /** An installed extension: its version folder with the built bundles in dist/. */
  function installExtension(folderName: string): LauncherTarget {
    const dist = path.join(root, 'extensions', folderName, 'dist');
    fs.mkdirSync(dist, { recursive: true });
    for (const file of ['cli.js', 'mcp.js']) fs.copyFileSync(path.join(REPO, 'dist', file), path.join(dist, file));
    return {
      platform: process.platform,
      runtime: process.execPath,
      electron: false,
      cliScript: path.join(dist, 'cli.js'),
    };
  }

  async function connect(): Promise<Client> {
    const transport = new StdioClientTransport({
      command: config.command,
      args: [...config.args],
      env,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'kimi-launcher-test', version: '0.0.0' });
    await client.connect(transport);
    return client;
  }

  async function toolsThrough(client: Client): Promise<{ tools: string[]; unknown: string }> {
    try {
      const { tools } = await client.listTools();
      const result = (await client.callTool({ name: 'kimi_status', arguments: { server: 'gpu9' } })) as CallToolResult;
      assert.equal(result.isError, true);
      return {
        tools: tools.map((t) => t.name).sort(),
        unknown: (result.content[0] as { type: 'text'; text: string }).text,
      };
    } finally {
      await client.close();
    }
  }

  before(() => {
    // The bundles under test are the current source (a separate run of this file needs no `npm run build`).
    execFileSync(process.execPath, ['esbuild.mjs', '--only=cli'], { cwd: REPO, stdio: 'pipe' });
    execFileSync(process.execPath, ['esbuild.mjs', '--only=mcp'], { cwd: REPO, stdio: 'pipe' });
    root = fs.mkdtempSync(path.join(os.tmpdir(), `kimi launcher 'q' "d" $HOME \`x\` `));
    binDir = path.join(root, 'my bin');
    const configFile = path.join(root, 'servers.json');
    fs.writeFileSync(configFile, JSON.stringify({ servers: [{ name: 'gpu1', host: 'gpu1.invalid', unit: 'sglang' }] }));
    env = {
      ...(process.env as Record<string, string>),
      PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}`,
      XDG_STATE_HOME: root,
      XDG_CONFIG_HOME: root,
    };
    const file = installLauncher(binDir, installExtension('kimi-tools.kimi-service-0.2.0'));
    launcher = file;
    const entry = launcherMcpEntry(launcherCommandFor(file, dirOnPath(binDir, env.PATH, process.platform, path)), [
      '--config',
      configFile,
    ]);
    config = JSON.parse(mcpConfigText(entry)).mcpServers.kimi;
  });

  after(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('is an executable script that runs the CLI: kimi-service --version', () => {
    assert.equal(path.basename(launcher), 'kimi-service');
    assert.ok((fs.statSync(launcher).mode & 0o111) !== 0, 'executable');
    assert.deepEqual(config, { command: 'kimi-service', args: ['mcp', '--config', path.join(root, 'servers.json')] });
    const out = execFileSync('kimi-service', ['--version'], { env, encoding: 'utf8' });
    assert.equal(out.trim(), version);
  });

  it('an MCP client configured with {"command": "kimi-service", "args": ["mcp"]} lists and calls the tools', async () => {
    const { tools, unknown } = await toolsThrough(await connect());
    assert.deepEqual(tools, TOOLS);
    assert.match(unknown, /No server named "gpu9" in .+servers\.json \(configured: "gpu1"\)\. Nothing was run\./);
  });

  it('after an update (new version folder, the old one removed) the refreshed launcher keeps the same configuration working', async () => {
    const updated = installExtension('kimi-tools.kimi-service-0.3.0');
    fs.rmSync(path.join(root, 'extensions', 'kimi-tools.kimi-service-0.2.0'), { recursive: true });
    // Before activation refreshes it, the launcher names the removed folder: the client cannot connect.
    await assert.rejects(async () => toolsThrough(await connect()));

    assert.equal(refreshLauncher(launcher, updated), 'rewrite');
    assert.equal(refreshLauncher(launcher, updated), 'current', 'an unchanged folder is not written again');
    assert.ok(readLauncher(launcher)!.includes('kimi-tools.kimi-service-0.3.0/dist/cli.js'));
    const { tools } = await toolsThrough(await connect());
    assert.deepEqual(tools, TOOLS);
  });

  it("a launcher the user removed is not written again, nor a file that is not the extension's", () => {
    const target = installExtension('kimi-tools.kimi-service-0.4.0');
    fs.writeFileSync(launcher, '#!/bin/sh\nexec my-own-kimi "$@"\n');
    assert.equal(refreshLauncher(launcher, target), 'foreign');
    assert.equal(fs.readFileSync(launcher, 'utf8'), '#!/bin/sh\nexec my-own-kimi "$@"\n');
    fs.rmSync(launcher);
    assert.equal(refreshLauncher(launcher, target), 'removed');
    assert.equal(fs.existsSync(launcher), false);
  });
});
