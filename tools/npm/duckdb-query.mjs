// duckdb-query.mjs runs one SQL query in an in-memory DuckDB and prints the
// rows as a JSON array of objects (BIGINT as numbers when safe, else
// strings). Go tests use it to read files with a reader we did not write:
//   node duckdb-query.mjs "SELECT count(*) AS n FROM 'file.parquet'"
import { DuckDBInstance } from '@duckdb/node-api';

const sql = process.argv[2];
if (!sql) {
  console.error('usage: node duckdb-query.mjs SQL');
  process.exit(2);
}
const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();
const reader = await conn.runAndReadAll(sql);
const rows = reader.getRowObjectsJson();
process.stdout.write(JSON.stringify(rows) + '\n');
