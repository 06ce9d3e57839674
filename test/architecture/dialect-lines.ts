/**
 * The code lines of `src/` that name a database outside the places allowed to (CONVENTIONS rule
 * 10, docs/architecture.md "The storage seam"): `src/db/` (infrastructure), the per-database store
 * files (`store/sqlite*.ts`, `store/postgres*.ts`) and the composition roots, which choose the
 * database once. Comments do not count: a comment may say why PostgreSQL needs what it needs.
 *
 * Run by hand: `npx tsx test/architecture/dialect-lines.ts` lists the lines.
 */
import { fileURLToPath } from 'node:url';
import { readSource, splitCodeAndComments, tsFilesUnder, type Finding } from './source-files.js';

/** Files that may name a database: infrastructure, per-database stores, composition roots. */
const MAY_NAME_A_DATABASE = [
  /^src\/db\//,
  /\/store\/(sqlite|postgres)[^/]*\.ts$/,
  /^src\/(app|runtime|server|worker|stores)\.ts$/,
  /^src\/cli\//,
  /^src\/config\//,
];

/** What names a database in code: the dialect switch, its names, PostgreSQL's functions, per-database identifiers. */
const NAMES_A_DATABASE: ReadonlyArray<[string, RegExp]> = [
  ['dialectOf', /\bdialectOf\b/],
  ['.dialect', /\.dialect\b/],
  ["'postgres'", /(['"`])postgres\1/],
  ["'sqlite'", /(['"`])sqlite\1/],
  ['pg_ function', /\bpg_[a-z][a-z0-9_]*/],
  ['…Pg / …Sqlite / …Postgres', /\b[A-Za-z_$][\w$]*(?:Pg|Sqlite|Postgres)\b/],
  ['pg… / sqlite…', /\b(?:pg|sqlite)[A-Z][\w$]*/],
];

export function checkedFile(file: string): boolean {
  return !MAY_NAME_A_DATABASE.some((re) => re.test(file));
}

/** The code lines of a TypeScript text that name a database (comments blanked first). */
export function linesNamingADatabase(file: string, text: string): Finding[] {
  const findings: Finding[] = [];
  splitCodeAndComments(text).code.forEach((line, i) => {
    if (NAMES_A_DATABASE.some(([, re]) => re.test(line))) findings.push({ file, line: i + 1, text: line.trim() });
  });
  return findings;
}

/** Every code line of `src/` outside the allowed files that names a database. */
export function dialectLines(): Finding[] {
  return tsFilesUnder('src')
    .filter(checkedFile)
    .flatMap((file) => linesNamingADatabase(file, readSource(file)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const found = dialectLines();
  for (const f of found) console.log(`${f.file}:${f.line}: ${f.text}`);
  console.log(`${found.length} line(s)`);
}
