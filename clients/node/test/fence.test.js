// SPDX-License-Identifier: LGPL-2.1-or-later
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { workspace } from './helpers.js';
import { openFence, FenceError, DshboxError } from '../index.js';

function fence(t, policy) {
  const ws = workspace(t);
  const f = openFence({ cwd: ws, policy: { workspace: ws, ...policy } });
  t.after(() => f.close());
  return { ws, f };
}

test('write, read, list', async (t) => {
  const { ws, f } = fence(t);
  const w = await f.write('dir/a.txt', 'hello\n');
  assert.equal(w.created, true);
  assert.equal(readFileSync(join(ws, 'dir/a.txt'), 'utf8'), 'hello\n');
  const r = await f.read('dir/a.txt');
  assert.equal(r.content, 'hello\n');
  assert.equal(r.version, w.version);
  const l = await f.list('dir');
  assert.deepEqual(l.entries.map((e) => e.name), ['a.txt']);
});

test('binary content and a name that is not UTF-8', async (t) => {
  const { f } = fence(t);
  const name = Buffer.from([0x63, 0xe9, 0x2e, 0x62]);
  await f.write(name, Buffer.from([0, 1, 2, 255]));
  const r = await f.read(name);
  assert.ok(Buffer.isBuffer(r.content));
  assert.deepEqual([...r.content], [0, 1, 2, 255]);
  const [e] = (await f.list('.')).entries;
  assert.deepEqual(e.nameBytes, name);
});

test('a stale expectVersion is a conflict, and nothing is written', async (t) => {
  const { ws, f } = fence(t);
  const { version } = await f.write('a.txt', 'one\n');
  writeFileSync(join(ws, 'a.txt'), 'two, from elsewhere\n');
  await assert.rejects(f.write('a.txt', 'three\n', { expectVersion: version }),
    (e) => e instanceof FenceError && e.kind === 'conflict' && e.path === join(ws, 'a.txt'));
  assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'two, from elsewhere\n');
});

test('a denial names its rule', async (t) => {
  const { ws, f } = fence(t, { access: ['-- *.pem'] });
  await assert.rejects(f.read('key.pem'),
    (e) => e.kind === 'denied' && e.rule === '-- *.pem' && e.path === join(ws, 'key.pem') && e.op === 'read');
  await assert.rejects(f.write('/etc/dshbox-node-test', 'x'),
    (e) => e.kind === 'denied' && e.rule === 'outside the writable roots');
  const v = await f.check('key.pem', 'write');
  assert.equal(v.allowed, false);
  assert.equal(v.rule, '-- *.pem');
  assert.equal((await f.check('ok.txt', 'write')).allowed, true);
});

test('edit returns the diff; with a stale version it is a conflict', async (t) => {
  const { f } = fence(t);
  const w = await f.write('n.txt', 'alpha\nbeta\n');
  const e = await f.edit('n.txt', 'beta', 'gamma', { expectVersion: w.version });
  assert.equal(e.replacements, 1);
  assert.match(e.diff, /^-beta$/m);
  assert.match(e.diff, /^\+gamma$/m);
  await assert.rejects(f.edit('n.txt', 'alpha', 'delta', { expectVersion: w.version }), { kind: 'conflict' });
  await assert.rejects(f.edit('n.txt', 'absent', 'x'), { kind: 'invalid' });
});

test('many requests in flight, each answer to its own request', async (t) => {
  const { f } = fence(t);
  const n = 100;
  await Promise.all(Array.from({ length: n }, (_, i) => f.write(`f${i}.txt`, `${i}\n`)));
  const reads = await Promise.all(Array.from({ length: n }, (_, i) => f.read(`f${i}.txt`)));
  reads.forEach((r, i) => assert.equal(r.content, `${i}\n`));
});

test('an invalid policy is a DshboxError, and the next request tries again', async (t) => {
  const ws = workspace(t);
  const f = openFence({ cwd: ws, policy: { access: ['bogus'] } });
  await assert.rejects(f.read('x'), (e) => e instanceof DshboxError && /bogus/.test(e.message));
  await assert.rejects(f.read('x'), DshboxError);
  await f.close();
});
