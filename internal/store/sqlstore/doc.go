// Package sqlstore holds what the two SQL stores (internal/store/sqlite and
// internal/store/postgres) do alike whatever their dialect: a Change
// encoded into column values, the columns a record is read from and the
// scanning of a row back into a record held against its evidence (the
// store edits the verifier must catch), and the writer queue (Queue).
//
// Each store keeps its own SQL text (placeholders, upserts, JSON
// functions) and its own transactions; both hand their rows here through
// Scanner, which *sql.Row, *sql.Rows, pgx.Row and pgx.Rows all satisfy.
package sqlstore
