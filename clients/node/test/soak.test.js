// SPDX-License-Identifier: LGPL-2.1-or-later
// The soak of test/soak.js, small enough for the suite (make soak runs 2,000).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import './helpers.js';
import { soak, summary } from './soak.js';

test('soak: 100 commands with aborts and timeouts mixed in leave nothing running', async (t) => {
  const r = await soak({ runs: 100, warmup: 10 });
  t.diagnostic(summary(r));
  assert.deepEqual(r.failures, [], summary(r));
});
