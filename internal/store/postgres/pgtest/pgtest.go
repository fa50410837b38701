// Package pgtest gives tests a private schema on the PostgreSQL server that
// MANDATE_TEST_POSTGRES names, created for the test and dropped after it, so
// parallel test runs (and other helpers' runs) never see each other's rows.
//
// A test that needs PostgreSQL fails when MANDATE_TEST_POSTGRES is set (or
// CI=true) and the server cannot be used; without either it is skipped, with
// one line on standard error saying so.
package pgtest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mandate-dev/mandate/internal/testpeer"
)

// Env is the variable holding the test server's DSN, e.g.
// postgres://postgres@127.0.0.1:5432/test.
const Env = "MANDATE_TEST_POSTGRES"

// Server returns the DSN of the test server, or skips (locally) or fails
// (in CI, or when the variable is set) the test (package testpeer).
func Server(t testing.TB) string {
	t.Helper()
	return testpeer.Env(t, Env, "set it to a PostgreSQL server's DSN, e.g. "+Env+"=postgres://postgres@127.0.0.1:5432/test")
}

// Conn connects to dsn, failing the test if it cannot.
func Conn(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("PostgreSQL at %s=%s is not usable: %v", Env, Redact(dsn), err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// DSN creates a fresh schema on the test server and returns a DSN whose
// search_path is it; the schema is dropped when the test ends.
func DSN(t testing.TB) string {
	t.Helper()
	base := Server(t)
	name := "mandate_t_" + strings.ToLower(rand.Text()[:12])
	admin := Conn(t, base)
	ctx := context.Background()
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("create test schema: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Logf("drop test schema %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP SCHEMA "+name+" CASCADE"); err != nil {
			t.Logf("drop test schema %s: %v", name, err)
		}
	})
	return WithParams(t, base, map[string]string{"search_path": name, "application_name": name})
}

// WithParams returns dsn with connection parameters set (URL or key=value
// form).
func WithParams(t testing.TB, dsn string, params map[string]string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("%s: %v", Env, err)
		}
		q := u.Query()
		for k, v := range params {
			if k == "user" {
				u.User = url.User(v)
				continue
			}
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	for k, v := range params {
		dsn += fmt.Sprintf(" %s=%s", k, v)
	}
	return dsn
}

// Redact hides a password in a DSN for messages.
func Redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		return u.String()
	}
	return dsn
}
