package cli

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/app"
	"github.com/mandate-dev/mandate/internal/auth"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/server"
)

// evidenceDir makes a data directory with one session's decisions, one of
// them carrying a password, and returns it with the session id.
func evidenceDir(t *testing.T) (string, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	a, err := app.Open(ctx, app.Config{DataDir: dir, Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	p := auth.Principal{Role: auth.RoleAdmin, TokenID: "tok_cli"}
	info, err := a.Engine.CreateSession(ctx, p, engine.SessionRequest{ID: "cli-1", AgentID: "mailer", Intent: "Send the Q3 summary to alice@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []map[string]any{{"to": "alice@example.com"}, {"to": "alice@example.com", "password": "pw-for-the-cli-test"}} {
		if _, err := a.Engine.Evaluate(ctx, p, engine.EvaluateRequest{SessionID: info.Session.ID, Tool: "send_email", Args: args}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, info.Session.ID
}

func TestEvidenceCommands(t *testing.T) {
	dir, session := evidenceDir(t)
	code, pub, errs := run(t, "", "evidence", "pubkey", "--data", dir)
	if code != 0 || !strings.HasPrefix(pub, "mandate/") {
		t.Fatalf("pubkey: %d %q %s", code, pub, errs)
	}
	pub = strings.TrimSpace(pub)
	bundle := filepath.Join(t.TempDir(), "b.json")
	if code, out, errs := run(t, "", "evidence", "export", "--session", session, "--data", dir, "--out", bundle); code != 0 {
		t.Fatalf("export: %d %s %s", code, out, errs)
	}
	if fi, err := os.Stat(bundle); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("bundle file: %v %v", fi, err)
	}
	code, out, errs := run(t, "", "evidence", "verify", bundle, "--key", pub)
	if code != 0 || !strings.Contains(out, "VERIFIED") || !strings.Contains(out, "decisions:  1 to 2") {
		t.Fatalf("verify: %d\n%s%s", code, out, errs)
	}

	// One character changed in a record: exit 1, the record named.
	b, _ := os.ReadFile(bundle)
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(strings.Replace(string(b), "alice@example.com", "alice@examplf.com", 1)), 0o644)
	code, out, errs = run(t, "", "evidence", "verify", bad, "--key", pub)
	if code != 1 || !strings.Contains(out, "NOT VERIFIED") || !strings.Contains(errs, "record ") {
		t.Fatalf("changed bundle: %d\n%s%s", code, out, errs)
	}

	saved := filepath.Join(t.TempDir(), "cp.note")
	if code, out, errs := run(t, "", "evidence", "checkpoint", "--data", dir, "--out", saved); code != 0 {
		t.Fatalf("checkpoint: %d %s %s", code, out, errs)
	}
	code, out, errs = run(t, "", "evidence", "verify", "--data", dir, "--since-checkpoint", saved, "--key", pub)
	if code != 0 || !strings.Contains(out, "VERIFIED") || !strings.Contains(out, "extends the saved checkpoint") {
		t.Fatalf("verify --data: %d\n%s%s", code, out, errs)
	}
	code, out, _ = run(t, "", "evidence", "verify", "--data", dir)
	if code != 0 || !strings.Contains(out, "the data directory's own key") {
		t.Fatalf("verify --data without --key: %d\n%s", code, out)
	}

	// The password was stored as a marker its holder can recognise.
	code, out, errs = run(t, "pw-for-the-cli-test\n", "evidence", "prove-secret", "--data", dir, "-")
	if code != 0 || !strings.Contains(out, "[REDACTED:sensitive_key:") || !strings.Contains(out, "record:  ") {
		t.Fatalf("prove-secret: %d\n%s%s", code, out, errs)
	}
	code, out, _ = run(t, "", "evidence", "prove-secret", "--data", dir, "never-stored-value")
	if code != 0 || !strings.Contains(out, "no evidence record carries this value") {
		t.Fatalf("prove-secret of another value: %d\n%s", code, out)
	}
}

func TestEvidenceExportFromServer(t *testing.T) {
	dir, session := evidenceDir(t)
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{DataDir: dir, Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tok, rec, _ := auth.Issue("user", "", "cli", time.Now())
	if err := a.Store.CreateToken(ctx, rec); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(server.Options{Engine: a.Engine, Evidence: a.Evidence}))
	defer srv.Close()

	// The server holds the data directory; --data still reads it.
	if _, err := a.Engine.Evaluate(ctx, auth.Principal{Role: auth.RoleAdmin, TokenID: "t"}, engine.EvaluateRequest{SessionID: session, Tool: "Read", Args: map[string]any{"file_path": "x"}}); err != nil {
		t.Fatal(err)
	}
	// The session's newest records are not committed by a head yet, and
	// the server holds the directory: --data cannot commit one and says
	// to export through the server.
	beside := filepath.Join(t.TempDir(), "beside.json")
	if code, _, errs := run(t, "", "evidence", "export", "--session", session, "--data", dir, "--out", beside); code != 1 || !strings.Contains(errs, "head must be committed") || !strings.Contains(errs, "--server") {
		t.Fatalf("export --data beside a running server, head not committed: %d %s", code, errs)
	}
	if code, o, errs := run(t, "", "evidence", "checkpoint", "--data", dir); code != 0 || !strings.HasPrefix(o, a.Evidence.Key().Name()+"\n") {
		t.Fatalf("checkpoint --data beside a running server: %d %s %s", code, o, errs)
	}

	out := filepath.Join(t.TempDir(), "b.json")
	if code, o, errs := run(t, "", "evidence", "export", "--session", session, "--server", srv.URL, "--token", tok, "--out", out); code != 0 {
		t.Fatalf("export --server: %d %s %s", code, o, errs)
	}
	if code, o, errs := run(t, "", "evidence", "verify", out, "--key", a.Evidence.Key().VerifierKey()); code != 0 || !strings.Contains(o, "decisions:  1 to 3") || !strings.Contains(o, "complete:") {
		t.Fatalf("verify: %d %s %s", code, o, errs)
	}
	// Now the head is current: --data reads the same bundle beside the
	// server.
	if code, o, errs := run(t, "", "evidence", "export", "--session", session, "--data", dir, "--out", beside); code != 0 {
		t.Fatalf("export --data beside a running server: %d %s %s", code, o, errs)
	}
	if code, o, errs := run(t, "", "evidence", "verify", beside, "--key", a.Evidence.Key().VerifierKey()); code != 0 || !strings.Contains(o, "decisions:  1 to 3") {
		t.Fatalf("verify: %d %s %s", code, o, errs)
	}
	if code, o, _ := run(t, "", "evidence", "checkpoint", "--server", srv.URL, "--token", tok); code != 0 || !strings.HasPrefix(o, a.Evidence.Key().Name()+"\n") {
		t.Fatalf("checkpoint --server: %d %s", code, o)
	}
	if code, _, errs := run(t, "", "evidence", "export", "--session", session, "--server", srv.URL, "--token", "mdt_wrong"); code != 1 || !strings.Contains(errs, "401") {
		t.Fatalf("bad token: %d %s", code, errs)
	}
}

func TestEvidenceUsageErrors(t *testing.T) {
	dir, _ := evidenceDir(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"evidence", "export", "--data", dir}, "--session is required"},
		{[]string{"evidence", "export", "--session", "x"}, "--data DIR or --server URL"},
		{[]string{"evidence", "export", "--session", "x", "--data", dir, "--server", "http://x"}, "not both"},
		{[]string{"evidence", "export", "--session", "x", "--server", "http://127.0.0.1:1"}, "--token"},
		{[]string{"evidence", "export", "--session", "nope", "--data", dir}, "not found"},
		{[]string{"evidence", "export", "--session", "x", "--data", filepath.Join(dir, "missing")}, "no Mandate database"},
		{[]string{"evidence", "verify"}, "give a bundle FILE"},
		{[]string{"evidence", "verify", "f.json"}, "--key is required"},
		{[]string{"evidence", "verify", "f.json", "--key", "garbage"}, "verifier key"},
		{[]string{"evidence", "verify", "f.json", "--data", dir}, "not both"},
		{[]string{"evidence", "verify", "f.json", "--key", "k", "--since-checkpoint", "c"}, "--since-checkpoint is for --data"},
		{[]string{"evidence", "pubkey", "--data", t.TempDir()}, "evidence key"},
		{[]string{"evidence", "prove-secret", "--data", t.TempDir(), "v"}, "redaction key"},
	} {
		code, out, errs := run(t, "", tt.args...)
		if code == 0 || !strings.Contains(out+errs, tt.want) {
			t.Errorf("%v: exit %d, output %q%q lacks %q", tt.args, code, out, errs, tt.want)
		}
	}
}
