/**
 * The architecture's rules, checked by test/architecture.test.ts (run by `npm test`).
 * The picture, each module's job and the reasons: docs/architecture.md.
 *
 *   server, cli, worker → app → http → modules → db, shared, config
 *   server → cluster (the processes of `invoicing serve`) → http/rate-limit, db
 *   inside modules (each arrow "may import"):
 *     sharing → catalog, rendering → invoices → notifications, edo, webhooks → links, teams, events
 *
 * Type-only imports count everywhere (tsPreCompilationDeps), so a cycle through `import type`
 * is still a cycle.
 */

/** Rank of each module: a module may import only modules of a strictly lower rank. */
const RANK = {
  links: 0,
  teams: 0,
  events: 0,
  notifications: 1,
  edo: 1,
  webhooks: 1,
  invoices: 2,
  catalog: 3,
  rendering: 3,
  sharing: 4,
};
const MODULES = Object.keys(RANK);
const alt = (names) => `(${names.join('|')})`;

/** For each module: the modules it must not import (same or higher rank). */
const directionRules = MODULES.map((name) => {
  const forbidden = MODULES.filter((other) => other !== name && RANK[other] >= RANK[name]);
  return {
    name: `module-direction-${name}`,
    comment: `${name} (rank ${RANK[name]}) may import only modules of a lower rank: see docs/architecture.md`,
    severity: 'error',
    from: { path: `^src/modules/${name}/` },
    to: { path: `^src/modules/${alt(forbidden)}/` },
  };
}).filter((rule) => rule.to.path !== '^src/modules/()/');

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycle between files of src/, type-only imports included.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'module-door',
      comment: 'Another module is used only through its index.ts.',
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: {
        path: '^src/modules/([^/]+)/.+',
        pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'cluster-door',
      comment: 'src/cluster/ is used only through its index.ts.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cluster/' },
      to: { path: '^src/cluster/', pathNot: '^src/cluster/index\\.ts$' },
    },
    {
      name: 'cluster-is-infrastructure',
      comment: 'cluster/ imports no module, app, runtime, cli or entry point: the entry point wires it in.',
      severity: 'error',
      from: { path: '^src/cluster/' },
      to: { path: '^src/(modules/|cli/|app\\.ts|runtime\\.ts|server\\.ts|worker\\.ts)' },
    },
    {
      name: 'outside-door',
      comment: 'Code outside the modules uses a module only through its index.ts.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/modules/' },
      to: { path: '^src/modules/[^/]+/.+', pathNot: '^src/modules/[^/]+/index\\.ts$' },
    },
    ...directionRules,
    {
      name: 'links-is-a-leaf',
      comment: 'links imports no other module.',
      severity: 'error',
      from: { path: '^src/modules/links/' },
      to: { path: '^src/modules/', pathNot: '^src/modules/links/' },
    },
    {
      name: 'events-is-a-leaf',
      comment: 'events imports no other module (only db and shared).',
      severity: 'error',
      from: { path: '^src/modules/events/' },
      to: { path: '^src/modules/', pathNot: '^src/modules/events/' },
    },
    {
      name: 'webhooks-not-invoices',
      comment: 'webhooks may use events, teams and links; never invoices.',
      severity: 'error',
      from: { path: '^src/modules/webhooks/' },
      to: { path: '^src/modules/invoices/' },
    },
    {
      name: 'rendering-imports-only-types',
      comment: 'rendering is pure: a print model in, bytes out; of other modules it imports types only.',
      severity: 'error',
      from: { path: '^src/modules/rendering/' },
      to: { path: '^src/modules/', pathNot: '^src/modules/rendering/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'invoices-read-write-apart',
      comment: 'In invoices, read/ and write/ share only model/, view/, rules/ and store/: neither imports the other (docs/architecture.md).',
      severity: 'error',
      from: { path: '^src/modules/invoices/(read|write)/' },
      to: { path: '^src/modules/invoices/(read|write)/', pathNot: '^src/modules/invoices/$1/' },
    },
    {
      name: 'invoices-store-below',
      comment: 'In invoices, store/ (the SQL) imports none of read/, write/, view/, model/ or the service and routes: they build on it.',
      severity: 'error',
      from: { path: '^src/modules/invoices/store/' },
      to: { path: '^src/modules/invoices/((read|write|view|model)/|invoice\\.)' },
    },
    {
      name: 'invoices-rules-pure',
      comment: 'In invoices, rules/ are pure: they import no store/, read/, write/ or view/ file.',
      severity: 'error',
      from: { path: '^src/modules/invoices/rules/' },
      to: { path: '^src/modules/invoices/(store|read|write|view)/' },
    },
    {
      name: 'modules-below-http',
      comment: 'Modules do not import http/, cluster/, app, runtime, cli or the entry points.',
      severity: 'error',
      from: { path: '^src/modules/' },
      to: { path: '^src/(http/|cluster/|cli/|app\\.ts|runtime\\.ts|server\\.ts|worker\\.ts)' },
    },
    {
      name: 'http-below-app',
      comment: 'http/ does not import cluster/, app, runtime, cli or the entry points.',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/(cluster/|cli/|app\\.ts|runtime\\.ts|server\\.ts|worker\\.ts)' },
    },
    {
      name: 'app-below-entries',
      comment: 'app and runtime do not import cli or the entry points.',
      severity: 'error',
      from: { path: '^src/(app|runtime)\\.ts$' },
      to: { path: '^src/(cli/|server\\.ts|worker\\.ts)' },
    },
    {
      name: 'foundation-stays-below',
      comment: 'db, shared and config import no module, http, cluster, app or entry point.',
      severity: 'error',
      from: { path: '^src/(db|shared|config)/' },
      to: { path: '^src/(modules/|http/|cluster/|cli/|app\\.ts|runtime\\.ts|server\\.ts|worker\\.ts)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js'],
    },
  },
};
