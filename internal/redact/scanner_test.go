package redact

import (
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/secret"
)

// An operator's detectors (a catalog file's secrets section) redact too.
func TestWithScanner(t *testing.T) {
	sc, err := secret.Load("ops.yaml", []byte("detectors:\n  - {type: mycorp_token, anchors: [mct_], pattern: 'mct_[A-Za-z0-9]{32}\\b'}\n"), secret.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	tok := "mct_" + strings.Repeat("Ab3Z", 8)
	plain, _ := New(NewKey())
	if out, changed := plain.Text("use " + tok); changed || out != "use "+tok {
		t.Fatalf("the built-in scanner redacted an unknown shape: %q", out)
	}
	r, err := New(NewKey(), WithScanner(sc))
	if err != nil {
		t.Fatal(err)
	}
	out, changed := r.Text("use " + tok)
	if !changed || strings.Contains(out, tok) || !strings.Contains(out, "[REDACTED:mycorp_token:") {
		t.Errorf("Text = %q", out)
	}
}
