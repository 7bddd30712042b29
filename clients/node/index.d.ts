// SPDX-License-Identifier: LGPL-2.1-or-later
export { run, runArgs, classify } from './run.js';
export type { Outcome, RunOptions, RunResult, RunReport } from './run.js';
export { openFence } from './fence.js';
export type { Fence, FenceOptions, FencePath, ReadAnswer, WriteAnswer, ListAnswer, ListEntry, CheckAnswer } from './fence.js';
export { FenceError, DshboxError } from './errors.js';
export type { FenceErrorKind } from './errors.js';
export { findBinary } from './binary.js';
export { policyArgs, accessRules } from './policy.js';
export type { Mode, Policy, PolicyOptions } from './policy.js';
