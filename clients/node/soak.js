#!/usr/bin/env node
// SPDX-License-Identifier: LGPL-2.1-or-later
// make soak's Node half: node soak.js [COUNT] (default $SOAK_NODE_RUNS, then 2000) runs COUNT
// commands through run() with aborts and timeouts mixed in (test/soak.js), prints the figures and
// exits 1 when a run ended otherwise than it must or anything was left.  DSHBOX: the binary (as for
// the suite, default ../../build/dshbox).  Not in the package (package.json's files).
import './test/helpers.js';
import { soak, summary } from './test/soak.js';

const runs = Number(process.argv[2] ?? process.env.SOAK_NODE_RUNS ?? 2000);
if (!Number.isInteger(runs) || runs <= 0) {
  console.error(`node soak: ${process.argv[2]}: not a count`);
  process.exit(2);
}
const r = await soak({ runs });
for (const f of r.failures) console.error(`node soak: FAIL: ${f}`);
console.log(summary(r));
process.exit(r.ok ? 0 : 1);
