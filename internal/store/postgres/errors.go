package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mandate-dev/mandate/internal/store"
)

// Errors Open and the store's operations return besides the store package's.
var (
	// ErrNewerSchema: the database was migrated by a newer release.
	ErrNewerSchema = errors.New("newer database schema")
	// ErrUnavailable wraps every failure to reach the database or to keep
	// the connection: the change it happened to was not acknowledged, and
	// a decision that needed it is refused.
	ErrUnavailable = errors.New("database unavailable")
	// ErrPermission: the database role lacks a privilege Mandate needs.
	ErrPermission = errors.New("permission denied")
)

// describe turns a driver error into one that says what was wrong, in the
// operator's terms, wrapping the store's sentinel errors where one applies.
func describe(what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("postgres: %s: %w", what, err)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "MD001":
			return fmt.Errorf("postgres: %s: %w (%s)", what, store.ErrStale, pe.Message)
		case pe.Code == "MD003":
			// An approval's revision moved on. Stale, so that a decision
			// using up an approval another replica used first is decided
			// again (and an answer that lost is a conflict).
			return fmt.Errorf("postgres: %s: %w (%s)", what, store.ErrStale, pe.Message)
		case pe.Code == "MD004":
			return fmt.Errorf("postgres: %s: %w (%s)", what, store.ErrBudget, pe.Message)
		case pe.Code == "MD002":
			return fmt.Errorf("postgres: %s: %w (%s)", what, store.ErrNotFound, pe.Message)
		case pe.Code == "23505" || pe.Code == "23503":
			return fmt.Errorf("postgres: %s: %w: %s", what, store.ErrConflict, pe.Message)
		case pe.Code == "42501":
			return fmt.Errorf("postgres: %s: %w: %s (grant the role the privileges, or run 'mandate store migrate' as the owner of the schema)", what, ErrPermission, pe.Message)
		case pe.Code == "3F000":
			return fmt.Errorf("postgres: %s: %w: %s (the schema in search_path does not exist, or the role has no USAGE on it)", what, ErrPermission, pe.Message)
		case pe.Code == "3D000":
			return fmt.Errorf("postgres: %s: %w: %s (create it first: createdb NAME)", what, ErrUnavailable, pe.Message)
		case pe.Code == "28000" || pe.Code == "28P01":
			return fmt.Errorf("postgres: %s: %w: authentication failed: %s", what, ErrPermission, pe.Message)
		case strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P") || pe.Code == "53300":
			// connection exceptions, operator intervention (shutdown,
			// terminated backends), too many connections
			return fmt.Errorf("postgres: %s: %w: %s", what, ErrUnavailable, pe.Message)
		}
		return fmt.Errorf("postgres: %s: %s (SQLSTATE %s)", what, pe.Message, pe.Code)
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) || pgconn.SafeToRetry(err) || isConnLoss(err) {
		return fmt.Errorf("postgres: %s: %w: %v", what, ErrUnavailable, err)
	}
	return fmt.Errorf("postgres: %s: %w", what, err)
}

func isConnLoss(err error) bool {
	s := err.Error()
	return strings.Contains(s, "conn closed") || strings.Contains(s, "unexpected EOF") ||
		strings.Contains(s, "connection reset") || strings.Contains(s, "broken pipe") ||
		strings.Contains(s, "failed to connect") || strings.Contains(s, "timeout")
}
