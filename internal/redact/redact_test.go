package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/action"
	"github.com/mandate-dev/mandate/internal/mandate"
	"github.com/mandate-dev/mandate/internal/store"
)

func newRedactor(t testing.TB) *Redactor {
	t.Helper()
	r, err := New(bytes.Repeat([]byte{42}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var markerRE = regexp.MustCompile(`\[REDACTED:([a-z0-9_]+):([0-9a-f]{32})\]`)

const (
	ghToken   = "ghp_R8xWq2LmN5vB7kT3yH9cJ4fD6sA1gZ0pE2uI"
	awsKey    = "AKIAQ3EGRTWUV5XBDZ7K"
	stripeKey = "sk_live_51HqR8xWq2LmN5vB7kT3yH9cJ4f"
)

func TestText(t *testing.T) {
	r := newRedactor(t)
	tests := []struct {
		in        string
		want      string // with H(x) standing for x's hash
		unchanged bool
	}{
		{in: "export GITHUB_TOKEN=" + ghToken, want: "export GITHUB_TOKEN=[REDACTED:github_token:H(" + ghToken + ")]"},
		{in: "key " + awsKey + " and " + stripeKey, want: "key [REDACTED:aws_access_key:H(" + awsKey + ")] and [REDACTED:stripe_key:H(" + stripeKey + ")]"},
		{in: "psql postgres://app:Sup3rS3cretPw@db:5432/x", want: "psql postgres://app:[REDACTED:password_in_url:H(Sup3rS3cretPw)]@db:5432/x"},
		{in: "read the README and run the tests", unchanged: true},
		{in: "short", unchanged: true},
	}
	for _, tt := range tests {
		got, changed := r.Text(tt.in)
		if tt.unchanged {
			if changed || got != tt.in {
				t.Errorf("Text(%q) = %q, %v; want it unchanged", tt.in, got, changed)
			}
			continue
		}
		want := regexp.MustCompile(`H\(([^)]*)\)`).ReplaceAllStringFunc(tt.want, func(m string) string { return r.Hash(m[2 : len(m)-1]) })
		if !changed || got != want {
			t.Errorf("Text(%q)\n got %q\nwant %q", tt.in, got, want)
		}
		// Markers are left alone: redacting again changes nothing.
		if again, changed := r.Text(got); changed || again != got {
			t.Errorf("Text is not idempotent: %q → %q", got, again)
		}
	}
}

func TestMarker(t *testing.T) {
	r := newRedactor(t)
	m := r.Marker("jwt", "eyJx")
	if !r.IsMarker(m) || r.IsMarker(m+" ") || r.IsMarker("[REDACTED]") {
		t.Errorf("IsMarker confused by %q", m)
	}
	if h := r.Hash("a"); h == r.Hash("b") || h != r.Hash("a") {
		t.Error("hash is not a function of the value")
	}
	other, _ := New(bytes.Repeat([]byte{7}, 32))
	if other.Hash("a") == r.Hash("a") {
		t.Error("the hash does not depend on the key")
	}
	if _, err := New([]byte("short")); err == nil {
		t.Error("a short key was accepted")
	}
}

func TestJSON(t *testing.T) {
	r := newRedactor(t)
	tests := []struct {
		name, in  string
		redacted  []string // values that must be gone
		kept      []string // values that must stay
		unchanged bool
	}{
		{name: "clean", in: `{"file_path":"README.md","limit":20,"max_tokens":512}`, unchanged: true},
		{name: "sensitive keys", in: `{"password":"correct horse battery","api_key":"kv-123456","Authorization":"Basic dXNlcjpwYXNz","pin":"1234"}`,
			redacted: []string{"correct horse battery", "kv-123456", "dXNlcjpwYXNz"}, kept: []string{`"pin":"1234"`}},
		{name: "numbers under a sensitive key", in: `{"cvv":123,"amount":123}`, redacted: []string{`"cvv":123`}, kept: []string{`"amount":123`}},
		{name: "arrays inherit, objects reset", in: `{"tokens_list":1,"secrets":["s3cr3t-one","s3cr3t-two"],"password":{"type":"string","description":"the user's password"}}`,
			redacted: []string{"s3cr3t-one", "s3cr3t-two"}, kept: []string{`"type":"string"`, `the user's password`}},
		{name: "placeholders", in: `{"password":"${DB_PASSWORD}","token":"****","secret":""}`, unchanged: true},
		{name: "patterns anywhere", in: `{"command":"curl -H 'X: ` + ghToken + `' https://x","nested":[{"a":"` + awsKey + `"}]}`,
			redacted: []string{ghToken, awsKey}, kept: []string{"curl -H"}},
		{name: "escaped text", in: `{"body":"key:\n` + strings.ReplaceAll(stripeKey, "_", `\u005f`) + `"}`, redacted: []string{"51HqR8xWq2LmN5vB7kT3yH9cJ4f"}},
		{name: "top-level string", in: `"` + ghToken + `"`, redacted: []string{ghToken}},
		{name: "markers stay", in: `{"password":"` + r.Marker("sensitive_key", "x") + `"}`, unchanged: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, changed, err := r.JSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if tt.unchanged {
				if changed || string(out) != tt.in {
					t.Errorf("changed to %s", out)
				}
				return
			}
			if !changed || !json.Valid(out) {
				t.Fatalf("JSON(%s) = %s, %v", tt.in, out, changed)
			}
			for _, s := range tt.redacted {
				if strings.Contains(string(out), s) {
					t.Errorf("%q survived: %s", s, out)
				}
			}
			for _, s := range tt.kept {
				if !strings.Contains(string(out), s) {
					t.Errorf("%q was lost: %s", s, out)
				}
			}
			if !markerRE.Match(out) {
				t.Errorf("no marker in %s", out)
			}
			again, changed, err := r.JSON(out)
			if err != nil || changed || !bytes.Equal(again, out) {
				t.Errorf("not idempotent: %s → %s", out, again)
			}
		})
	}
	for _, bad := range []string{`{"a":"x`, `{"a":1`, `]`} {
		if _, _, err := r.JSON([]byte(bad)); err == nil {
			t.Errorf("JSON(%s): no error", bad)
		}
	}
}

// FuzzJSONScan holds the cheap scan to the full redaction: it reports a
// change exactly when decoding and redacting would change something.
func FuzzJSONScan(f *testing.F) {
	for _, s := range []string{
		`{"password":"hunter2!x"}`, `{"a":["` + ghToken + `"]}`, `{"tokens":["x"],"api_key":{"k":"v"}}`,
		`[{"Authorization":"Bearer abcdefghijklmnop1234"}]`, `{"cvv":123}`, `"plain"`, `{"a":"\u0041KIA` + awsKey[4:] + `"}`,
		`{"url":"https://u:p4ssw0rd@h/x"}`, `{"k":null,"secret":true}`,
	} {
		f.Add([]byte(s))
	}
	r := newRedactor(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		var v any
		dec := json.NewDecoder(bytes.NewReader(in))
		dec.UseNumber()
		if !json.Valid(in) || dec.Decode(&v) != nil {
			return
		}
		scan, err := r.scanJSON(in)
		if err != nil {
			t.Fatalf("scan of valid JSON %q: %v", in, err)
		}
		_, full, err := r.dynamic(v, false)
		if err != nil {
			t.Fatal(err)
		}
		if scan != full {
			t.Fatalf("scan says %v, redaction says %v, for %q", scan, full, in)
		}
	})
}

type withSecrets struct {
	Name     string         `json:"name"`
	Password string         `json:"password"`
	Notes    []string       `json:"notes"`
	Extra    map[string]any `json:"extra"`
	When     time.Time      `json:"when"`
	Count    int            `json:"count"`
	Raw      json.RawMessage
}

func TestValueCopiesOnWrite(t *testing.T) {
	r := newRedactor(t)
	orig := &withSecrets{Name: "n", Password: "pa55word-zz", Notes: []string{"ok", "token " + ghToken}, Extra: map[string]any{"api_key": "kv-998877", "n": 1.0},
		Raw: json.RawMessage(`{"secret":"abcdef-123"}`)}
	snapshot := *orig
	snapshot.Notes = append([]string(nil), orig.Notes...)
	got, changed, err := r.Value(orig)
	if err != nil || !changed {
		t.Fatalf("Value: %v %v", changed, err)
	}
	if orig.Password != snapshot.Password || !reflect.DeepEqual(orig.Notes, snapshot.Notes) || orig.Extra["api_key"] != "kv-998877" || string(orig.Raw) != `{"secret":"abcdef-123"}` {
		t.Fatalf("the original was modified: %+v", orig)
	}
	red := got.(*withSecrets)
	for _, s := range []string{red.Password, red.Notes[1], red.Extra["api_key"].(string), string(red.Raw)} {
		if !markerRE.MatchString(s) {
			t.Errorf("not redacted: %q", s)
		}
	}
	if red.Name != "n" || red.Notes[0] != "ok" || red.Extra["n"] != 1.0 {
		t.Errorf("clean values changed: %+v", red)
	}
	clean := &withSecrets{Name: "n", Notes: []string{"ok"}}
	if got, changed, _ := r.Value(clean); changed || got != any(clean) {
		t.Error("a clean value was copied")
	}
}

func decisionChange(args string) *store.Change {
	now := time.Now()
	return &store.Change{
		Session: &store.Session{ID: "s", Status: "active", MandateVersion: 1, UpdatedAt: now, Tools: []action.ToolDef{{Name: "t", Description: "uses " + ghToken}}},
		Decision: &store.Decision{ID: "d", SessionID: "s", Seq: 3, Surface: "api", Tool: "Bash", Args: json.RawMessage(args),
			Action: &action.Action{Tool: "Bash", Kind: action.Execute, Kinds: []action.Kind{action.Execute, action.Read},
				Paths:    []action.PathRef{{Path: "/home/dev/project/pkg/auth", Access: action.Read}},
				Commands: []action.Command{{Argv: []string{"go", "test", "./pkg/auth/..."}, Name: "go", Kind: action.Execute}, {Argv: []string{"tail", "-20"}, Name: "tail", Kind: action.Read}},
				Notes:    []string{"shell: 2 commands"}},
			PolicyHash: "abc", Effect: "allow", Rules: []string{"builtin.granted"}, Reasons: []string{"the task asked for it"}, CreatedAt: now},
	}
}

func TestRedactChange(t *testing.T) {
	r := newRedactor(t)
	c := decisionChange(`{"command":"GITHUB_TOKEN=` + ghToken + ` go test ./..."}`)
	origDecision, origAction := c.Decision, c.Decision.Action
	origArgs := string(c.Decision.Args)
	c.Decision.Action.Commands[0].Argv = append(c.Decision.Action.Commands[0].Argv, ghToken)
	if err := r.Redact(c); err != nil {
		t.Fatal(err)
	}
	if c.Decision == origDecision || c.Decision.Action == origAction {
		t.Error("the decision was redacted in place")
	}
	if string(origDecision.Args) != origArgs || origAction.Commands[0].Argv[3] != ghToken {
		t.Error("the engine's values were modified")
	}
	if strings.Contains(string(c.Decision.Args), ghToken) || c.Decision.Action.Commands[0].Argv[3] == ghToken {
		t.Errorf("secret survived: %s %v", c.Decision.Args, c.Decision.Action.Commands[0].Argv)
	}
	// A session update stores no tools, so they are not redacted there.
	if c.Session.Tools[0].Description != "uses "+ghToken {
		t.Error("a session update's tools were rewritten")
	}

	nc := &store.Change{NewSession: true, Session: &store.Session{ID: "s", Tools: []action.ToolDef{{Name: "t", Description: "uses " + ghToken,
		InputSchema: map[string]any{"properties": map[string]any{"token": map[string]any{"type": "string", "default": stripeKey}}}}}},
		Mandate: &store.MandateVersion{SessionID: "s", Version: 1, Mandate: &mandate.Mandate{Instructions: []mandate.Instruction{{Text: "use key " + awsKey, Source: "user"}}}}}
	if err := r.Redact(nc); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(nc)
	for _, s := range []string{ghToken, stripeKey, awsKey} {
		if strings.Contains(string(b), s) {
			t.Errorf("%s survived in a new session: %s", s, b)
		}
	}
}

func TestKeyFiles(t *testing.T) {
	dir := t.TempDir()
	k1, err := LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := LoadOrCreateKey(dir)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("key changed on reload: %v", err)
	}
	if _, err := LoadKey(t.TempDir()); err == nil {
		t.Error("LoadKey without a key file: no error")
	}
}

func BenchmarkRedactCleanDecision(b *testing.B) {
	benchRedact(b, `{"command":"go test ./pkg/auth/... 2>&1 | tail -20","description":"run tests"}`)
}

func BenchmarkRedactSecretDecision(b *testing.B) {
	benchRedact(b, `{"command":"curl -H 'Authorization: Bearer `+ghToken+`' https://api.example.com","password":"hunter2-xyz"}`)
}

// benchRedact redacts a decision on a call with these args, again and
// again from the same unredacted decision.
func benchRedact(b *testing.B, args string) {
	r := newRedactor(b)
	c := decisionChange(args)
	d := c.Decision
	b.ReportAllocs()
	for b.Loop() {
		c.Decision = d
		if err := r.Redact(c); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCleanTextsRemembered: a text found clean is remembered and answers
// the same again; one with a secret is never remembered and is redacted
// every time; the set stays bounded and keeps working once full.
func TestCleanTextsRemembered(t *testing.T) {
	r := newRedactor(t)
	clean := "reads a file inside the mandate's scope: pkg/auth/token.go"
	for range 2 {
		if got, changed := r.Text(clean); changed || got != clean {
			t.Fatalf("Text(%q) = %q, %v", clean, got, changed)
		}
	}
	if !r.clean.has(clean) {
		t.Fatalf("a clean text is not remembered")
	}
	dirty := "curl -H 'Authorization: Bearer " + ghToken + "' https://api.example.com"
	first, changed := r.Text(dirty)
	if !changed || strings.Contains(first, ghToken) {
		t.Fatalf("Text(dirty) = %q, %v: the token is not redacted", first, changed)
	}
	if again, changed := r.Text(dirty); !changed || again != first {
		t.Fatalf("Text(dirty) again = %q, %v, want %q", again, changed, first)
	}
	if r.clean.has(dirty) {
		t.Fatalf("a text with a secret is remembered as clean")
	}
	long := strings.Repeat("no secret here ", 40)
	r.Text(long)
	if r.clean.has(long) {
		t.Fatalf("a text over %d bytes is remembered", maxCleanText)
	}
	for i := range maxCleanTexts + 10 {
		r.Text(fmt.Sprintf("a clean reason number %d", i))
	}
	if n := r.clean.n.Load(); n > maxCleanTexts {
		t.Fatalf("%d texts remembered, over the bound of %d", n, maxCleanTexts)
	}
	if got, changed := r.Text(dirty); !changed || got != first {
		t.Fatalf("Text(dirty) after the set filled = %q, %v", got, changed)
	}
	if got, changed := r.Text(clean); changed || got != clean {
		t.Fatalf("Text(clean) after the set filled = %q, %v", got, changed)
	}
}
