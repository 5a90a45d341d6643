// The panel's pure modules, compiled to CommonJS by `npm run test:unit` (tsconfig.pure.json).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const built = '../../labextension/build/pure/';
export const run = require(built + 'run.js');
export const events = require(built + 'events.js');
export const labels = require(built + 'labels.js');
export const sessions = require(built + 'sessions.js');
export const sseParser = require(built + 'sse-parser.js');
export const validate = require(built + 'validate.js');
export const media = require(built + 'media.js');
export const settings = require(built + 'settings.js');
export const state = require(built + 'state.js');
export const mentions = require(built + 'mentions.js');
export const pages = require(built + 'pages.js');
export const diff = require(built + 'diff.js');
export const proposal = require(built + 'proposal.js');
export const transcript = require(built + 'transcript.js');
export const status = require(built + 'status.js');
export const throttle = require(built + 'throttle.js');
export const plain = require(built + 'plain.js');
export const listings = require(built + 'listings.js');
export const agents = require(built + 'agents.js');
export const hub = require(built + 'hub.js');
export const watch = require(built + 'watch.js');
export const completionContext = require(built + 'completion/context.js');
export const completionSettings = require(built + 'completion/settings.js');
export const completionPending = require(built + 'completion/pending.js');
