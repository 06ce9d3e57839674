/**
 * What grew between two V8 heap snapshots (e.g. minute 2 and minute 9 of the read soak, written
 * with BENCH_HEAPSNAPSHOT_AT, see docs/performance.md "Benchmark"):
 *
 *   npm run build && node --max-old-space-size=4096 dist/bench/heap-diff.js A.heapsnapshot B.heapsnapshot [rows]
 *
 * Prints (1) the self size and count of every kind of object (constructor name; strings, code,
 * arrays and closures each as one kind) in A and B, largest change first, and (2) for the
 * objects of the kind that grew most, what holds them in B: their retainer paths (the first
 * strong retainer, four levels up), by total self size. Self sizes only: no dominator tree.
 */
import fs from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

interface Heap {
  raw: Snapshot;
  count: number;
  /** Per node: its kind (see kindOf) and self size. */
  kind: string[];
  size: Float64Array;
}

const STRING_TYPES = new Set(['string', 'concatenated string', 'sliced string']);

function kindOf(type: string, name: string): string {
  if (STRING_TYPES.has(type)) return '(string)';
  if (type === 'code' || type === 'closure' || type === 'number' || type === 'regexp' || type === 'bigint') return `(${type})`;
  if (type === 'object shape') return '(shape)';
  if (type === 'object') return name.slice(0, 60);
  return `(${type}) ${name.slice(0, 50)}`;
}

function load(file: string): Heap {
  const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot;
  const meta = raw.snapshot.meta;
  const width = meta.node_fields.length;
  const [type, name, selfSize] = ['type', 'name', 'self_size'].map((f) => meta.node_fields.indexOf(f)) as [number, number, number];
  const count = raw.nodes.length / width;
  const kind: string[] = new Array<string>(count);
  const size = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const base = i * width;
    kind[i] = kindOf(meta.node_types[0][raw.nodes[base + type] as number] as string, raw.strings[raw.nodes[base + name] as number] ?? '');
    size[i] = raw.nodes[base + selfSize] as number;
  }
  return { raw, count, kind, size };
}

function byKind(heap: Heap): Map<string, { n: number; bytes: number }> {
  const totals = new Map<string, { n: number; bytes: number }>();
  for (let i = 0; i < heap.count; i++) {
    const t = totals.get(heap.kind[i] as string) ?? { n: 0, bytes: 0 };
    t.n++;
    t.bytes += heap.size[i] as number;
    totals.set(heap.kind[i] as string, t);
  }
  return totals;
}

/** For every node of `kind`, its first strong retainer path `depth` levels up, summed by path. */
function retainerPaths(heap: Heap, kind: string, depth: number): Array<{ path: string; n: number; bytes: number; example: string }> {
  const { raw } = heap;
  const meta = raw.snapshot.meta;
  const nodeWidth = meta.node_fields.length;
  const edgeWidth = meta.edge_fields.length;
  const edgeCount = meta.node_fields.indexOf('edge_count');
  const nameField = meta.node_fields.indexOf('name');
  const [edgeType, edgeName, toNode] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f)) as [number, number, number];
  const edgeTypes = meta.edge_types[0];
  const retainer = new Int32Array(heap.count).fill(-1);
  const via = new Array<string>(heap.count);
  for (let i = 0, e = 0; i < heap.count; i++) {
    const end = e + (raw.nodes[i * nodeWidth + edgeCount] as number) * edgeWidth;
    for (; e < end; e += edgeWidth) {
      const type = edgeTypes[raw.edges[e + edgeType] as number] as string;
      if (type === 'weak') continue;
      const to = (raw.edges[e + toNode] as number) / nodeWidth;
      if (retainer[to] !== -1) continue;
      retainer[to] = i;
      via[to] = type === 'element' || type === 'hidden' ? `[${type}]` : `.${raw.strings[raw.edges[e + edgeName] as number]}`;
    }
  }
  const paths = new Map<string, { n: number; bytes: number; example: string }>();
  for (let i = 0; i < heap.count; i++) {
    if (heap.kind[i] !== kind) continue;
    const steps: string[] = [];
    for (let at = i, d = 0; d < depth && (retainer[at] as number) >= 0; d++) {
      const up = retainer[at] as number;
      steps.push(`${via[at]} of ${heap.kind[up]}`);
      at = up;
    }
    const key = steps.join(' < ');
    const p = paths.get(key) ?? { n: 0, bytes: 0, example: String(raw.strings[raw.nodes[i * nodeWidth + nameField] as number]).slice(0, 80) };
    p.n++;
    p.bytes += heap.size[i] as number;
    paths.set(key, p);
  }
  return [...paths].map(([path, p]) => ({ path, ...p })).sort((a, b) => b.bytes - a.bytes);
}

function main(): void {
  const [fileA, fileB, rowsArg] = process.argv.slice(2);
  if (!fileA || !fileB) throw new Error('usage: heap-diff A.heapsnapshot B.heapsnapshot [rows]');
  const rows = Number(rowsArg ?? 25);
  const mb = (bytes: number): string => (bytes / 1048576).toFixed(2);
  const a = load(fileA);
  const kindsA = byKind(a);
  const b = load(fileB);
  const kindsB = byKind(b);
  const sum = (k: Map<string, { bytes: number }>): number => [...k.values()].reduce((s, v) => s + v.bytes, 0);
  process.stdout.write(`A: ${a.count} objects, ${mb(sum(kindsA))} MB; B: ${b.count} objects, ${mb(sum(kindsB))} MB (self sizes)\n\n`);
  const changes = [...new Set([...kindsA.keys(), ...kindsB.keys()])]
    .map((kind) => {
      const x = kindsA.get(kind) ?? { n: 0, bytes: 0 };
      const y = kindsB.get(kind) ?? { n: 0, bytes: 0 };
      return { kind, x, y, delta: y.bytes - x.bytes };
    })
    .sort((p, q) => Math.abs(q.delta) - Math.abs(p.delta));
  process.stdout.write('| change MB | A MB | B MB | A count | B count | kind |\n|---:|---:|---:|---:|---:|---|\n');
  for (const c of changes.slice(0, rows)) {
    process.stdout.write(`| ${mb(c.delta)} | ${mb(c.x.bytes)} | ${mb(c.y.bytes)} | ${c.x.n} | ${c.y.n} | ${c.kind} |\n`);
  }
  const grown = changes.find((c) => c.delta > 0);
  if (!grown) return;
  process.stdout.write(`\nWhat holds ${grown.kind} in B (first strong retainer, four levels up):\n\n`);
  for (const p of retainerPaths(b, grown.kind, 4).slice(0, 10)) {
    process.stdout.write(`${mb(p.bytes)} MB in ${p.n}: ${p.path}\n    e.g. ${JSON.stringify(p.example)}\n`);
  }
}

main();
