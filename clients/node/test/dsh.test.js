// SPDX-License-Identifier: LGPL-2.1-or-later
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { binary, workspace } from './helpers.js';
import { createSandboxService, createFsService, normaliseConfig } from '../dsh.js';

test('config: access as a block or a list, rules need their prefix, unknown keys refused', () => {
  assert.deepEqual(normaliseConfig({ access: 'rw /a\n\n  -- *.pem\n' }).access, ['rw /a', '-- *.pem']);
  assert.deepEqual(normaliseConfig({ access: ['r- x'] }).access, ['r- x']);
  assert.throws(() => normaliseConfig({ access: ['x'] }), /expected 'rw'/);
  assert.throws(() => normaliseConfig({ access: ['--'] }), /expected 'rw'/);
  assert.throws(() => normaliseConfig({ acess: [] }), /unknown key/);
});

test('sandbox service: confine returns the dshbox run argv, and it enforces the rules', (t) => {
  const ws = workspace(t);
  writeFileSync(join(ws, 'mise.local.toml'), 'x = 1\n');
  const s = createSandboxService({ access: '-- mise.*.toml\nr- ro', probeTimeoutMs: 4000 },
    { workspaceRoot: ws, mode: 'workspace-write' });
  t.after(() => s.dispose());
  const argv = s.confine(['sh', '-c', 'echo ok > w.txt; cat mise.local.toml']);
  assert.equal(argv[0], binary);
  assert.equal(argv[1], 'run');
  assert.deepEqual(argv.slice(-4), ['--', 'sh', '-c', 'echo ok > w.txt; cat mise.local.toml']);
  const r = spawnSync(argv[0], argv.slice(1), { cwd: ws, encoding: 'utf8' });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /Permission denied/);
  assert.equal(readFileSync(join(ws, 'w.txt'), 'utf8'), 'ok\n');
  const file = argv[argv.indexOf('--config') + 1];
  assert.ok(existsSync(file));
  s.dispose();
  assert.ok(!existsSync(file), 'dispose removes the configuration file');
});

test('sandbox service: the network by name reaches dshbox through the configuration file', (t) => {
  assert.throws(() => normaliseConfig({ network: { allowDomain: [] } }), /unknown key/);
  assert.throws(() => normaliseConfig({ network: { allowDomains: 'x.example' } }), /list of patterns/);
  const ws = workspace(t);
  const s = createSandboxService({ network: { allowDomains: ['registry.example'] } },
    { workspaceRoot: ws, mode: 'workspace-write' });
  t.after(() => s.dispose());
  const argv = s.confine(['sh', '-c', 'getent hosts registry.example; getent hosts other.example; echo rc=$?']);
  const r = spawnSync(argv[0], argv.slice(1), { cwd: ws, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^198\.18\.\d+\.\d+\s+registry\.example\nrc=2\n$/);
});

test('sandbox service: read-only session', (t) => {
  const ws = workspace(t);
  const s = createSandboxService({}, { workspaceRoot: ws, mode: 'read-only' });
  assert.ok(!s.confine(['true']).includes('--config'), 'no file without file-only keys');
  const argv = s.confine(['sh', '-c', 'echo x > f']);
  const r = spawnSync(argv[0], argv.slice(1), { cwd: ws, encoding: 'utf8' });
  assert.notEqual(r.status, 0);
  assert.ok(!existsSync(join(ws, 'f')));
});

test('fs service: read / write / edit / list under the same rules, relative to cwd', async (t) => {
  const ws = workspace(t);
  mkdirSync(join(ws, 'sub'));
  const fs = createFsService({ access: ['-- **/*.pem', 'r- sub/locked'], cwd: join(ws, 'sub'), diffBasisMaxBytes: 1 << 20 },
    { workspaceRoot: ws, mode: 'workspace-write' });
  t.after(() => fs.dispose());
  const w = await fs.write('a.txt', 'one\n');
  assert.equal(w.path, join(ws, 'sub/a.txt'));
  const e = await fs.edit('a.txt', 'one', 'two', { expectVersion: w.version });
  assert.match(e.diff, /\+two/);
  assert.equal((await fs.read('a.txt')).content, 'two\n');
  assert.deepEqual((await fs.list('.')).entries.map((x) => x.name), ['a.txt']);
  await assert.rejects(fs.write('deep/k.pem', 'x'), { kind: 'denied', rule: '-- **/*.pem' });
  await assert.rejects(fs.write('locked', 'x'), { kind: 'denied', rule: 'r- sub/locked' });
});
