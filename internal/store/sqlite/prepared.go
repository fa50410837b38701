package sqlite

import (
	"context"
	"database/sql"
	"errors"
)

// The read pool's hot lookups — a call's approvals (every ask), a session,
// a token — run as prepared statements, prepared once per query text and
// kept: modernc's prepare (parsing and planning the SQL) was a third of
// such a lookup's CPU. database/sql prepares each statement again on every
// pool connection that runs it, and closes them with the pool. Only query
// texts written in this package are prepared (a fixed set; filters that
// build their text from a few optional clauses give at most a few
// variants), so the cache is bounded by the code.

// stmt returns the prepared statement for q.
func (s *Store) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := s.stmts.Load(q); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := s.pool.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if prev, loaded := s.stmts.LoadOrStore(q, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// query is pool.QueryContext through a prepared statement.
func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := s.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// queryRow is pool.QueryRowContext through a prepared statement. A query
// that cannot be prepared runs unprepared, so its error comes back from
// Scan as it always did.
func (s *Store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := s.stmt(ctx, q)
	if err != nil {
		return s.pool.QueryRowContext(ctx, q, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// closeStmts closes the prepared statements, before the pool.
func (s *Store) closeStmts() error {
	var errs []error
	s.stmts.Range(func(k, v any) bool {
		errs = append(errs, v.(*sql.Stmt).Close())
		s.stmts.Delete(k)
		return true
	})
	return errors.Join(errs...)
}
