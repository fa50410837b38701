package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/store/postgres/pgtest"
)

func TestStoreCommandsBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"store", "migrate"}, "--store postgres://"},
		{[]string{"store", "migrate", "--store", "mysql://db/x"}, "PostgreSQL address"},
		{[]string{"store", "migrate", "--store", "postgres://u:hunter2@[::1"}, "not a valid PostgreSQL URL"},
		{[]string{"store", "copy", "--to", "postgres://x@127.0.0.1:1/x"}, "--from"},
		{[]string{"store", "copy", "--from", "/nonexistent", "--to", "postgres://x@127.0.0.1:1/x"}, "/nonexistent"},
		{[]string{"evidence", "verify", "--store", "postgres://x@127.0.0.1:1/x"}, "--key"},
		{[]string{"evidence", "verify", "--store", "postgres://x@127.0.0.1:1/x?connect_timeout=2", "--key", "x+1+2"}, ""},
		{[]string{"serve", "--store", "sqlite:///tmp/x"}, "PostgreSQL address"},
	}
	for _, tt := range tests {
		code, out, errs := run(t, "", tt.args...)
		if code == 0 || !strings.Contains(out+errs, tt.want) || strings.Contains(out+errs, "hunter2") {
			t.Errorf("%v: exit %d, output %q, want an error naming %q (and no password)", tt.args, code, out+errs, tt.want)
		}
	}
}

func TestStoreMigrateCopyVerify(t *testing.T) {
	dsn := pgtest.DSN(t)
	keys := filepath.Join(t.TempDir(), "keys")
	code, out, errs := run(t, "", "store", "migrate", "--store", dsn, "--data", keys)
	if code != 0 || !strings.Contains(out, "schema migrated from version 0") || !strings.Contains(out, "verifier key: mandate/") {
		t.Fatalf("migrate: %d %s %s", code, out, errs)
	}
	for _, f := range []string{"evidence.key", "redact.key"} {
		if fi, err := os.Stat(filepath.Join(keys, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, fi, err)
		}
	}
	if code, out, _ := run(t, "", "store", "migrate", "--store", dsn); code != 0 || !strings.Contains(out, "up to date") {
		t.Errorf("migrate again: %d %s", code, out)
	}
	// An empty shared store verifies (nothing to check yet).
	if code, out, errs := run(t, "", "evidence", "verify", "--store", dsn, "--data", keys); code != 0 || !strings.Contains(out, "VERIFIED") {
		t.Errorf("verify an empty store: %d %s %s", code, out, errs)
	}
	// A token made against the store.
	if code, out, errs := run(t, "", "token", "create", "--role", "agent", "--agent", "a1", "--store", dsn); code != 0 || !strings.HasPrefix(out, "mdt_") && len(strings.TrimSpace(out)) < 20 {
		t.Errorf("token create --store: %d %q %s", code, out, errs)
	}
}
