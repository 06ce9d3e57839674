/**
 * The architecture's rules (.dependency-cruiser.cjs, docs/architecture.md), checked on the real
 * source tree, and shown to bite on a small tree that breaks each of them.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/process.js';

const run = promisify(execFile);
const CONFIG = path.join(REPO_ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = path.join(REPO_ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  cycle?: Array<{ name: string }>;
}

/** Runs dependency-cruiser on `src/` of `cwd` with the project's rules; the violations it reports. */
async function cruise(cwd: string): Promise<Violation[]> {
  const args = [DEPCRUISE, 'src', '--config', CONFIG, '--output-type', 'json', '--no-progress'];
  // depcruise exits non-zero when it finds violations; the JSON is on stdout either way.
  const { stdout } = await run(process.execPath, args, { cwd, maxBuffer: 64 * 1024 * 1024 }).catch((e: { stdout?: string }) => {
    if (typeof e.stdout === 'string' && e.stdout.startsWith('{')) return { stdout: e.stdout };
    throw e;
  });
  const result = JSON.parse(stdout) as { summary: { violations: Violation[]; totalCruised: number } };
  expect(result.summary.totalCruised).toBeGreaterThan(0);
  return result.summary.violations;
}

const describeViolation = (v: Violation) =>
  `${v.rule.name}: ${v.from} → ${v.to}${v.cycle ? ` (cycle: ${v.cycle.map((c) => c.name).join(' → ')})` : ''}`;

describe('module architecture', () => {
  it('src/ has no import cycle, no import against the direction and none past another module’s index.ts', async () => {
    const violations = await cruise(REPO_ROOT);
    expect(violations.map(describeViolation)).toEqual([]);
  }, 60_000);

  describe('the rules catch each kind of violation', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arch-rules-'));
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
    const write = (file: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), text);
    };

    it('reports cycles (type-only too), reversed directions, deep imports and value imports into rendering', async () => {
      write('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
      // A type-only cycle inside one module.
      write('src/modules/invoices/a.ts', "import type { B } from './b.js';\nexport type A = { b?: B };\n");
      write('src/modules/invoices/b.ts', "import type { A } from './a.js';\nexport type B = { a?: A };\n");
      write('src/modules/invoices/index.ts', "export type { A } from './a.js';\nexport const label = 'x';\n");
      // links is a leaf; edo must not import notifications (same rank); invoices must not import sharing.
      write('src/modules/links/index.ts', "import { label } from '../invoices/index.js';\nexport const link = label;\n");
      write('src/modules/notifications/index.ts', 'export const n = 1;\n');
      write('src/modules/edo/index.ts', "import { n } from '../notifications/index.js';\nexport const e = n;\n");
      write('src/modules/sharing/index.ts', 'export const s = 1;\n');
      write('src/modules/invoices/up.ts', "import { s } from '../sharing/index.js';\nexport const up = s;\n");
      // Past another module's door.
      write('src/modules/catalog/index.ts', "import type { A } from '../invoices/a.js';\nexport type C = A;\n");
      // rendering takes types only.
      write('src/modules/rendering/index.ts', "import { label } from '../invoices/index.js';\nimport type { A } from '../invoices/index.js';\nexport const r: A | string = label;\n");
      // webhooks never imports invoices; modules never import http/.
      write('src/modules/webhooks/index.ts', "import { label } from '../invoices/index.js';\nexport const w = label;\n");
      write('src/http/auth.ts', 'export const auth = 1;\n');
      write('src/modules/teams/index.ts', "import { auth } from '../../http/auth.js';\nexport const t = auth;\n");
      // cluster/: one door; it imports no module; http/ does not import it.
      write('src/cluster/index.ts', "export { p } from './primary.js';\n");
      write('src/cluster/primary.ts', "import { n } from '../modules/notifications/index.js';\nexport const p = n;\n");
      write('src/server.ts', "import { p } from './cluster/primary.js';\nexport const s = p;\n");
      write('src/http/metrics.ts', "import { p } from '../cluster/index.js';\nexport const m = p;\n");
      // Inside invoices: read/ and write/ apart, store/ below them, rules/ pure.
      write('src/modules/invoices/write/w.ts', 'export const w = 1;\n');
      write('src/modules/invoices/read/r.ts', "import { w } from '../write/w.js';\nexport const r = w;\n");
      write('src/modules/invoices/store/s.ts', "import { r } from '../read/r.js';\nexport const s = r;\n");
      write('src/modules/invoices/rules/u.ts', "import { s } from '../store/s.js';\nexport const u = s;\n");

      const found = new Set((await cruise(dir)).map((v) => `${v.rule.name} ${v.from} ${v.to}`));
      const expected = [
        'no-circular src/modules/invoices/a.ts src/modules/invoices/b.ts',
        'links-is-a-leaf src/modules/links/index.ts src/modules/invoices/index.ts',
        'module-direction-edo src/modules/edo/index.ts src/modules/notifications/index.ts',
        'module-direction-invoices src/modules/invoices/up.ts src/modules/sharing/index.ts',
        'module-door src/modules/catalog/index.ts src/modules/invoices/a.ts',
        'rendering-imports-only-types src/modules/rendering/index.ts src/modules/invoices/index.ts',
        'webhooks-not-invoices src/modules/webhooks/index.ts src/modules/invoices/index.ts',
        'modules-below-http src/modules/teams/index.ts src/http/auth.ts',
        'cluster-door src/server.ts src/cluster/primary.ts',
        'cluster-is-infrastructure src/cluster/primary.ts src/modules/notifications/index.ts',
        'http-below-app src/http/metrics.ts src/cluster/index.ts',
        'invoices-read-write-apart src/modules/invoices/read/r.ts src/modules/invoices/write/w.ts',
        'invoices-store-below src/modules/invoices/store/s.ts src/modules/invoices/read/r.ts',
        'invoices-rules-pure src/modules/invoices/rules/u.ts src/modules/invoices/store/s.ts',
      ];
      for (const line of expected) expect(found, line).toContain(line);
    }, 60_000);
  });
});
