// SPDX-License-Identifier: LGPL-2.1-or-later
export { run, runArgs, classify } from './run.js';
export { openFence } from './fence.js';
export { FenceError, DshboxError } from './errors.js';
export { findBinary } from './binary.js';
export { policyArgs, accessRules } from './policy.js';
