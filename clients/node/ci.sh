#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# CI for the Node client: its suite against a built dshbox, then the packed tarball installed into
# a scratch project that runs a smoke program.  Builds nothing of the C side.
# Usage: clients/node/ci.sh PATH-TO-BUILT-DSHBOX
set -eu
[ $# -eq 1 ] || { echo "usage: $0 PATH-TO-DSHBOX" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
DSHBOX=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
export DSHBOX
[ -x "$DSHBOX" ] || { echo "$0: $DSHBOX is not executable" >&2; exit 2; }
if ! command -v npm >/dev/null; then
	# CI has npm; anywhere the rule is that nothing skips silently (DSHBOX_TEST_NO_SKIP=1), a
	# missing npm fails.
	echo "$0: SKIP: npm not found" >&2
	[ "${DSHBOX_TEST_NO_SKIP:-0}" = 1 ] && exit 1
	exit 0
fi

scratch=$(mktemp -d /var/tmp/dshbox-node-ci.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
# Work on a copy: the checkout may belong to another user, and npm writes beside package.json.
cp -R "$here/." "$scratch/pkg"
cp -R "$here/../../schema" "$scratch/schema"
mkdir -p "$scratch/clients" && mv "$scratch/pkg" "$scratch/clients/node"
cd "$scratch/clients/node"
export npm_config_cache="$scratch/npm-cache" npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
npm ci --no-audit --no-fund
npm test
tarball=$(npm pack --silent | tail -n 1)

mkdir "$scratch/smoke" && cd "$scratch/smoke"
npm init -y >/dev/null
npm install --no-audit --no-fund "$scratch/clients/node/$tarball"
cat > smoke.mjs <<'JS'
import { run, openFence } from 'dshbox';
import { createSandboxService } from 'dshbox/dsh';
const r = await run(['sh', '-c', 'echo hi; echo x > k.pem'], { policy: { access: ['-- *.pem'] } });
if (r.outcome !== 'denied' || r.stdout !== 'hi\n') throw new Error(`run: ${JSON.stringify(r.outcome)} ${r.stderr}`);
const f = openFence({ policy: { access: ['-- *.pem'] } });
const w = await f.write('note.txt', 'hello\n');
const back = await f.read('note.txt');
if (back.content !== 'hello\n' || back.version !== w.version) throw new Error('fence read');
await f.read('k.pem').then(() => { throw new Error('fence: k.pem readable'); }, (e) => { if (e.rule !== '-- *.pem') throw e; });
await f.close();
const argv = createSandboxService({ access: '-- *.pem' }, { workspaceRoot: process.cwd(), mode: 'workspace-write' }).confine(['true']);
if (argv[1] !== 'run') throw new Error('confine');
console.log('dshbox node smoke: ok');
JS
node smoke.mjs
