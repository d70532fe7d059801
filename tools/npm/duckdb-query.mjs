// duckdb-query.mjs runs SQL queries in one in-memory DuckDB and prints, as
// one JSON array, the rows of each query (an array of objects per query;
// BIGINT values come out as strings). Go tests use it to read files with a
// reader we did not write:
//   node duckdb-query.mjs "SELECT count(*) AS n FROM 'file.parquet'" [SQL...]
import { DuckDBInstance } from '@duckdb/node-api';

const queries = process.argv.slice(2);
if (queries.length === 0) {
  console.error('usage: node duckdb-query.mjs SQL [SQL...]');
  process.exit(2);
}
const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();
const results = [];
for (const sql of queries) {
  const reader = await conn.runAndReadAll(sql);
  results.push(reader.getRowObjectsJson());
}
process.stdout.write(JSON.stringify(results) + '\n');
