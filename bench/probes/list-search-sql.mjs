// Straight SQL on a seeded bench database (SQLite): plans and timings (median of 7) of a search page
// walked on the list index, filtered by the trigram candidates, or collected, and of the counts.
//   node bench/probes/list-search-sql.mjs /work/bench-1m/bench.sqlite полярная
import Database from 'better-sqlite3';
const db = new Database(process.argv[2], { readonly: true });
const q = process.argv[3] ?? 'полярная';
const like = `%${q}%`;
const phrase = `"${q}"`;
const cols = 'invoices.public_id, invoices.number, invoices.date, invoices.currency, invoices.direction, invoices.seller_name, invoices.seller_inn, invoices.buyer_name, invoices.buyer_inn, invoices.subtotal, invoices.vat_total, invoices.total, invoices.seller_status, invoices.buyer_status, invoices.service_status, invoices.service_status_reason, invoices.editor_mode, invoices.created_at, invoices.last_modified_at, invoices.changed_at';
const order = 'order by invoices.date desc, invoices.created_at desc, invoices.public_id desc limit ? offset ?';
const shapes = {
  walk: `select ${cols} from invoices where invoices.team_id = ? and invoices.search_text like ? escape '\\' ${order}`,
  walkFtsFilter: `select ${cols} from invoices where invoices.team_id = ? and +invoices.rowid in (select rowid from invoices_fts where invoices_fts match ?) and invoices.search_text like ? escape '\\' ${order}`,
  collect: `select ${cols} from invoices where +invoices.team_id = ? and invoices.rowid in (select rowid from invoices_fts where invoices_fts match ?) and invoices.search_text like ? escape '\\' ${order}`,
  ftsCount: `select count(*) from (select rowid from invoices_fts where invoices_fts match ? limit 200000)`,
  fullCount: `select count(*) from invoices where +invoices.team_id = ? and invoices.rowid in (select rowid from invoices_fts where invoices_fts match ?) and invoices.search_text like ? escape '\\'`,
};
const args = {
  walk: (l, o) => ['bench', like, l, o],
  walkFtsFilter: (l, o) => ['bench', phrase, like, l, o],
  collect: (l, o) => ['bench', phrase, like, l, o],
  ftsCount: () => [phrase],
  fullCount: () => ['bench', phrase, like],
};
for (const [name, text] of Object.entries(shapes)) {
  const st = db.prepare(text);
  console.log(`-- ${name}: ${db.prepare(`explain query plan ${text}`).all(...args[name](55, 36)).map((r) => r.detail).join(' | ')}`);
  const times = [];
  let n;
  for (let i = 0; i < 7; i++) {
    const t0 = performance.now();
    const rows = st.raw(true).all(...args[name](45 + (i % 11), i % 37));
    times.push(performance.now() - t0);
    n = rows.length === 1 ? rows[0][0] : rows.length;
  }
  times.sort((a, b) => a - b);
  console.log(`   median ${times[3].toFixed(2)} ms (min ${times[0].toFixed(2)}), rows/answer ${n}`);
}
