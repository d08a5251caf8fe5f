#!/usr/bin/env node
'use strict';
// Stand-in for sudo, for root's sessions only: `sudo [-n] [-E] [-H] [-u root] [--] cmd args...` runs
// cmd as is (we are root). With FIX/state/sudo.json {"requirePassword":true} it fails like real sudo
// without a tty/askpass. Any other user (GpuHostOptions.users) gets Debian's real sudo instead: the
// wrapper FIX/bin/sudo execs /usr/bin/sudo before this file is ever run (see harness.ts).
const path = require('path');
const { spawn } = require('child_process');
const c = require('../lib/common');

c.logExec('sudo', process.argv.slice(2));

const args = process.argv.slice(2);
let nonInteractive = false;
let i = 0;
for (; i < args.length; i++) {
  const a = args[i];
  if (a === '--') {
    i++;
    break;
  }
  if (a === '-n' || a === '--non-interactive') nonInteractive = true;
  else if (a === '-u' || a === '-g' || a === '-C' || a === '-D') i++;
  else if (/^-[A-Za-z]+$/.test(a) && !a.includes('u')) {
    if (a.includes('n')) nonInteractive = true;
  } else if (a.startsWith('-')) {
    /* other options accepted */
  } else break;
}
const cmd = args.slice(i);
if (!cmd.length) {
  process.stderr.write('usage: sudo -h | -K | -k | -V\nusage: sudo [-n] command [arg ...]\n');
  process.exit(1);
}
const cfg = c.readJson(path.join(c.STATE, 'sudo.json'), {});
if (cfg.requirePassword) {
  if (nonInteractive) process.stderr.write('sudo: a password is required\n');
  else
    process.stderr.write(
      'sudo: a terminal is required to read the password; either use the -S option to read from standard input or configure an askpass helper\nsudo: a password is required\n',
    );
  process.exit(1);
}
const child = spawn(cmd[0], cmd.slice(1), { stdio: 'inherit' });
child.on('error', (e) => {
  process.stderr.write(
    e.code === 'ENOENT' ? `sudo: ${cmd[0]}: command not found\n` : `sudo: unable to execute ${cmd[0]}: ${e.message}\n`,
  );
  process.exit(1);
});
for (const s of ['SIGTERM', 'SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2']) {
  process.on(s, () => {
    try {
      child.kill(s);
    } catch {
      /* */
    }
  });
}
child.on('exit', (code, sig) => {
  if (sig) process.exit(128 + (c.sigNum(sig) || 1));
  process.exit(code === null ? 1 : code);
});
