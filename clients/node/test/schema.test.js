// SPDX-License-Identifier: LGPL-2.1-or-later
// schema/*.json against what the built binary really says and accepts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { binary, workspace } from './helpers.js';
import { validate } from './validate.js';
import { run } from '../index.js';

const schemaDir = resolve(dirname(fileURLToPath(import.meta.url)), '../../../schema');
const load = (name) => JSON.parse(readFileSync(join(schemaDir, name), 'utf8'));
const valid = (schema, v) => assert.deepEqual(validate(schema, v), [], JSON.stringify(v));

test('the --report JSON', async (t) => {
  const schema = load('report.schema.json');
  const ws = workspace(t);
  for (const policy of [{}, { mode: 'read-only', access: ['-- *.pem'] }, { access: ['rw /var/tmp', 'r- x', '-- **/*.key'] }]) {
    const r = await run(['true'], { cwd: ws, policy });
    assert.equal(r.outcome, 'ok', r.stderr);
    valid(schema, r.report);
  }
  assert.notDeepEqual(validate(schema, { backend: 'linux-ns' }), []);
});

test('the --report JSON of a filtered network: its refusals, counted after the run', async (t) => {
  const schema = load('report.schema.json');
  const r = await run(['sh', '-c', 'getent hosts nothing.invalid; true'],
    { cwd: workspace(t), policy: { allowDomains: ['registry.example'], denyDomains: ['*.ads.example'] } });
  assert.equal(r.outcome, 'ok', r.stderr);
  valid(schema, r.report);
  assert.equal(r.report.network, false);
  assert.deepEqual(r.report.network_filter.allowDomains.map((p) => p.pattern), ['registry.example']);
  assert.ok(r.report.network_filter.refused.some((f) => f.name === 'nothing.invalid' && f.via === 'dns' && f.count >= 1),
    JSON.stringify(r.report.network_filter));
  assert.throws(() => run(['true'], { policy: { allowDomains: 'x.example' } }), /list of patterns/);
});

test('onAsk: each question matches schema/ask.schema.json, and its answer decides', async (t) => {
  const schema = load('ask.schema.json');
  const asked = [];
  const r = await run(['sh', '-c', 'getent hosts yes.example; getent hosts no.example; echo rc=$?'], {
    cwd: workspace(t), policy: { allowDomains: ['registry.example'] },
    onAsk: async (q) => { asked.push(q); return q.name === 'yes.example' ? 'allow-run' : 'deny'; } });
  assert.equal(r.outcome, 'ok', r.stderr);
  assert.match(r.stdout, /^198\.18\.\d+\.\d+\s+yes\.example\nrc=2\n$/);
  assert.ok(asked.some((q) => q.name === 'yes.example' && q.port === 0 && q.via === 'dns'), JSON.stringify(asked));
  assert.ok(asked.some((q) => q.name === 'no.example'), JSON.stringify(asked));
  for (const q of asked) valid(schema, { id: 1, ...q });
  valid(schema, { id: 1, decision: 'allow-once' });
  assert.notDeepEqual(validate(schema, { id: 1, decision: 'maybe' }), []);
  assert.ok(r.report.network_filter.refused.some((f) => f.name === 'no.example' && f.reason === 'denied by the host'),
    JSON.stringify(r.report.network_filter.refused));
});

test('serve requests and answers', (t) => {
  const req = load('serve-request.schema.json');
  const ans = load('serve-answer.schema.json');
  const ws = workspace(t);
  writeFileSync(join(ws, 'bin'), Buffer.from([0, 255]));
  const requests = [
    { id: 1, op: 'write', path: 'a.txt', content: 'hello\n' },
    { id: 2, op: 'read', path: 'a.txt', offset: 0, limit: 4096 },
    { id: 'e', op: 'edit', path: 'a.txt', old: 'hello', new: 'bye', all: false },
    { id: 4, op: 'list', path: '.' },
    { id: 5, op: 'read', path_base64: Buffer.from('bin').toString('base64') },
    { id: 6, op: 'write', path: 'b.bin', content: 'AAEC/w==', encoding: 'base64' },
    { id: 7, op: 'read', path: 'k.pem' },
    { id: null, op: 'write', path: 'a.txt', content: 'x', expectVersion: '1:2:3' },
    { id: 9, op: 'read', path: 'missing' },
  ];
  for (const r of requests) valid(req, r);
  assert.notDeepEqual(validate(req, { op: 'read', path: 'a', path_base64: 'YQ==' }), []);
  assert.notDeepEqual(validate(req, { op: 'read', path: 'a', bogus: 1 }), []);
  const input = requests.map((r) => JSON.stringify(r)).join('\n') + '\nnot json\n';
  const out = spawnSync(binary, ['serve', '--access', '-- *.pem', '--stdio'], { cwd: ws, input, encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  const answers = out.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(answers.length, requests.length + 1);
  for (const a of answers) valid(ans, a);
  assert.deepEqual(answers.map((a) => a.ok), [true, true, true, true, true, true, false, false, false, false]);
});

test('the configuration file: what the schema accepts, dshbox loads', (t) => {
  const schema = load('dshbox.yml.schema.json');
  const ws = workspace(t);
  const configs = [
    {},
    { mode: 'read-only', network: 'off', access: ['-- **/*.pem', 'r- secrets'] },
    { mode: 'workspace-write', workspace: ws, cwd: ws, access: 'rw /var/tmp\n-- *.key\n', network: true,
      probeTimeoutMs: 3000, diffBasisMaxBytes: 1024, maxMasks: 100, protectSockets: true, protectDefaults: false, unprotect: ['.vscode'],
      allowUnixSockets: ['@x'], runtimeBroker: true, allowDegraded: false, nestedSandbox: false, tmp: 'private',
      env: { inherit: 'core', exclude: ['*TOKEN*'], set: { A: 'b' } } },
    { backend: 'runner', runnerCommand: ['bwrap'], runnerFailureSignatures: ['bwrap: '] },
  ];
  for (const [i, c] of configs.entries()) {
    valid(schema, c);
    const file = join(ws, `c${i}.yml`);
    writeFileSync(file, JSON.stringify(c)); // JSON is YAML
    const r = spawnSync(binary, ['explain', '--config', file], { cwd: ws, encoding: 'utf8' });
    assert.equal(r.status, 0, `${JSON.stringify(c)}: ${r.stderr}`);
  }
  for (const bad of [{ mode: 'wide-open' }, { acces: [] }, { probeTimeoutMs: 0 }, { access: ['x'] }, { tmp: 'shared' }, { unprotect: ['.ssh'] },
    { runnerCommand: ['bwrap'], runnerFailureSignatures: ['bwrap: '] }, { backend: 'bubblewrap' }]) {
    assert.notDeepEqual(validate(schema, bad), [], JSON.stringify(bad));
    const file = join(ws, 'bad.yml');
    writeFileSync(file, JSON.stringify(bad));
    const r = spawnSync(binary, ['explain', '--config', file], { cwd: ws, encoding: 'utf8' });
    assert.equal(r.status, 125, `dshbox refuses ${JSON.stringify(bad)} too`);
  }
});
