/**
 * The `kimi-service` launcher's pure parts: where it goes, its text for a POSIX shell and for
 * cmd.exe (quoting of awkward paths, the Electron switch), the PATH check, the refresh decision
 * at activation, and the MCP entry it gives.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import {
  cmdQuote,
  dirOnPath,
  LAUNCHER_MARK,
  launcherCommandFor,
  launcherDir,
  launcherFileName,
  launcherRefresh,
  launcherText,
  shQuote,
} from '../../src/fronts/vscode/launcher/launcherScript';
import { launcherMcpEntry, mcpConfigText } from '../../src/fronts/mcp/clientConfig';

describe('launcher: where it goes', () => {
  it('is ~/.local/bin on Linux and macOS', () => {
    assert.equal(launcherDir('linux', {}, '/home/me', path.posix), '/home/me/.local/bin');
    assert.equal(launcherDir('darwin', {}, '/Users/me', path.posix), '/Users/me/.local/bin');
    assert.equal(launcherFileName('linux'), 'kimi-service');
  });

  it('is under %LOCALAPPDATA%\\Programs on Windows, as a .cmd', () => {
    assert.equal(
      launcherDir('win32', { LOCALAPPDATA: 'C:\\Users\\me\\AppData\\Local' }, 'C:\\Users\\me', path.win32),
      'C:\\Users\\me\\AppData\\Local\\Programs\\kimi-service\\bin',
    );
    assert.equal(
      launcherDir('win32', {}, 'C:\\Users\\me', path.win32),
      'C:\\Users\\me\\AppData\\Local\\Programs\\kimi-service\\bin',
    );
    assert.equal(launcherFileName('win32'), 'kimi-service.cmd');
  });
});

describe('launcher: its text', () => {
  it('runs the CLI with the Electron runtime as Node, every argument passed on', () => {
    const text = launcherText({
      platform: 'linux',
      runtime: '/usr/share/code/code',
      electron: true,
      cliScript: '/home/me/.vscode/extensions/kimi-tools.kimi-service-0.2.0/dist/cli.js',
    });
    assert.ok(text.startsWith('#!/bin/sh\n'));
    assert.ok(text.includes(LAUNCHER_MARK));
    assert.match(
      text,
      /^ELECTRON_RUN_AS_NODE=1 exec '\/usr\/share\/code\/code' '\/home\/me\/\.vscode\/extensions\/kimi-tools\.kimi-service-0\.2\.0\/dist\/cli\.js' "\$@"$/m,
    );
  });

  it('sets no Electron switch for a plain Node runtime (code-server)', () => {
    const text = launcherText({
      platform: 'linux',
      runtime: '/usr/lib/code-server/lib/node',
      electron: false,
      cliScript: '/x/cli.js',
    });
    assert.doesNotMatch(text, /ELECTRON_RUN_AS_NODE/);
    assert.match(text, /^exec '\/usr\/lib\/code-server\/lib\/node' '\/x\/cli\.js' "\$@"$/m);
  });

  it('quotes quotes, spaces, $ and backquotes for the shell', () => {
    assert.equal(shQuote(`/a b/it's/$HOME/\`x\``), `'/a b/it'\\''s/$HOME/\`x\`'`);
    const text = launcherText({
      platform: 'darwin',
      runtime: "/Apps/Code's/node",
      electron: true,
      cliScript: '/e/cli.js',
    });
    assert.match(text, /exec '\/Apps\/Code'\\''s\/node' '\/e\/cli\.js' "\$@"/);
  });

  it('writes a batch file on Windows: quoted paths, % doubled, CRLF, the exit code kept', () => {
    const text = launcherText({
      platform: 'win32',
      runtime: 'C:\\Users\\me\\AppData\\Local\\Programs\\Microsoft VS Code\\Code.exe',
      electron: true,
      cliScript: 'C:\\Users\\100%me\\.vscode\\extensions\\kimi-tools.kimi-service-0.2.0\\dist\\cli.js',
    });
    const lines = text.split('\r\n');
    assert.equal(lines[0], '@echo off');
    assert.ok(lines.includes('set ELECTRON_RUN_AS_NODE=1'));
    assert.ok(
      lines.includes(
        '"C:\\Users\\me\\AppData\\Local\\Programs\\Microsoft VS Code\\Code.exe" "C:\\Users\\100%%me\\.vscode\\extensions\\kimi-tools.kimi-service-0.2.0\\dist\\cli.js" %*',
      ),
    );
    assert.ok(lines.includes('exit /b %ERRORLEVEL%'));
    assert.ok(text.includes(LAUNCHER_MARK));
    assert.doesNotMatch(text.replace(/\r\n/g, ''), /\n/);
  });

  it('refuses what cannot be quoted', () => {
    assert.throws(() => cmdQuote('C:\\a"b'), /double quote/);
    assert.throws(
      () => launcherText({ platform: 'linux', runtime: '/n', electron: false, cliScript: '/a\nb/cli.js' }),
      /line break/,
    );
  });
});

describe('launcher: on PATH', () => {
  it('finds its folder among PATH entries, with or without a trailing slash', () => {
    assert.equal(dirOnPath('/home/me/.local/bin', '/usr/bin:/home/me/.local/bin/:/bin', 'linux', path.posix), true);
    assert.equal(dirOnPath('/home/me/.local/bin', '/usr/bin:/bin', 'linux', path.posix), false);
    assert.equal(dirOnPath('/home/me/.local/bin', undefined, 'linux', path.posix), false);
    assert.equal(dirOnPath('/home/me/.local/bin', '/home/me/.local/bin2', 'linux', path.posix), false);
  });

  it('ignores case and quotes on Windows', () => {
    const dir = 'C:\\Users\\me\\AppData\\Local\\Programs\\kimi-service\\bin';
    assert.equal(
      dirOnPath(dir, 'C:\\Windows;"c:\\users\\ME\\appdata\\local\\programs\\kimi-service\\bin\\"', 'win32', path.win32),
      true,
    );
    assert.equal(dirOnPath(dir, 'C:\\Windows', 'win32', path.win32), false);
  });
});

describe('launcher: refreshed at activation', () => {
  const a = launcherText({
    platform: 'linux',
    runtime: '/n',
    electron: false,
    cliScript: '/ext/kimi-service-0.2.0/dist/cli.js',
  });
  const b = launcherText({
    platform: 'linux',
    runtime: '/n',
    electron: false,
    cliScript: '/ext/kimi-service-0.3.0/dist/cli.js',
  });

  it('rewrites a launcher that names another version folder, and only that', () => {
    assert.equal(launcherRefresh(a, b), 'rewrite');
    assert.equal(launcherRefresh(b, b), 'current');
  });

  it('never writes a file the user removed or replaced', () => {
    assert.equal(launcherRefresh(undefined, b), 'removed');
    assert.equal(launcherRefresh('#!/bin/sh\nexec my-own-thing "$@"\n', b), 'foreign');
  });
});

describe('launcher: the MCP entry', () => {
  it('goes through cmd /c on Windows, where the launcher is a batch file', () => {
    assert.deepEqual(launcherMcpEntry('kimi-service', [], 'win32'), {
      command: 'cmd',
      args: ['/c', 'kimi-service', 'mcp'],
    });
  });

  it('is kimi-service mcp when the folder is on PATH, else the full path', () => {
    assert.deepEqual(
      JSON.parse(mcpConfigText(launcherMcpEntry(launcherCommandFor('/home/me/.local/bin/kimi-service', true)))),
      {
        mcpServers: { kimi: { command: 'kimi-service', args: ['mcp'] } },
      },
    );
    assert.deepEqual(
      launcherMcpEntry(launcherCommandFor('/home/me/.local/bin/kimi-service', false), ['--settings', '/s.json']),
      {
        command: '/home/me/.local/bin/kimi-service',
        args: ['mcp', '--settings', '/s.json'],
      },
    );
  });
});
