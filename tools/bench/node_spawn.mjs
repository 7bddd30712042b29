// SPDX-License-Identifier: GPL-2.0-or-later
// Start-up as a Node host sees it (issue 25's "from Node" row): the wall time from spawn to the
// end, for the package's run(['/bin/true']) (dshbox run --report /dev/fd/3, as every host command
// runs) against spawning the same `dshbox run` without a report, the kernel's floor
// (unshare -Urmpf --mount-proc), bubblewrap with the same mounts when given, and /bin/true bare.
// The commands alternate run by run, so a busy machine slows all alike; medians in ms.
//
//   node tools/bench/node_spawn.mjs RUNS WORKSPACE [BWRAP-ARGV...]
// DSHBOX names the binary (clients/node finds it the same way).
import { spawn } from 'node:child_process';
import { run } from '../../clients/node/index.js';

const [runs, ws, ...bwrap] = process.argv.slice(2);
const n = Number(runs);
if (!(n > 0) || !ws) {
  console.error('usage: node_spawn.mjs RUNS WORKSPACE [BWRAP-ARGV...]');
  process.exit(2);
}
const dshbox = process.env.DSHBOX;

function spawned(argv) {
  return new Promise((resolve, reject) => {
    const c = spawn(argv[0], argv.slice(1), { stdio: 'ignore', cwd: ws });
    c.on('error', reject);
    c.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${argv.join(' ')}: exit ${code}`))));
  });
}

const sides = [
  ['run()', async () => {
    const r = await run(['/bin/true'], { cwd: ws, workspace: ws });
    if (r.outcome !== 'ok') throw new Error(`run(): ${r.outcome}: ${r.stderr}`);
  }],
  ['dshbox', () => spawned([dshbox, 'run', '--workspace', ws, '--', '/bin/true'])],
  ['floor', () => spawned(['unshare', '-Urmpf', '--mount-proc', '/bin/true'])],
  ...(bwrap.length ? [['bwrap', () => spawned([...bwrap, '/bin/true'])]] : []),
  ['bare', () => spawned(['/bin/true'])],
];

const times = sides.map(() => []);
for (let i = 0; i < n; i++) {
  for (let k = 0; k < sides.length; k++) {
    const t0 = process.hrtime.bigint();
    await sides[k][1]();
    times[k].push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
}
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const m = times.map(median);
for (let k = 0; k < sides.length; k++)
  console.log(`   ${sides[k][0].padEnd(10)} median ${m[k].toFixed(2).padStart(8)} ms   (${n} runs)` +
              (k ? `   run() / ${sides[k][0]} = ${(m[0] / m[k]).toFixed(2)}` : ''));
// One line for the summary table: TITLE \t label=ms ...
console.log(`TABLE\tstart-up from Node: run(['true'])\t${sides.map((s, k) => `${s[0]}=${m[k].toFixed(3)}`).join('\t')}`);
