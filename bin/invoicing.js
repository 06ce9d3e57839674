#!/usr/bin/env node
// The `invoicing` command. The TypeScript is compiled by `npm ci` (prepare) and `npm start`.
import('../dist/src/cli/entry.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND') {
    process.stderr.write('invoicing: the project is not built; run `npm run build` first\n');
    process.exit(1);
  }
  throw err;
});
