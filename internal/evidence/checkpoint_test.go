package evidence

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadKey(dir); err == nil {
		t.Fatal("LoadKey of a directory without a key: no error")
	}
	k1, err := LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %04o, want 0600", fi.Mode().Perm())
	}
	k2, err := LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	if k1.VerifierKey() != k2.VerifierKey() {
		t.Error("the key changed on the second start")
	}
	if !strings.HasPrefix(k1.VerifierKey(), k1.Name()+"+") || !strings.HasPrefix(k1.Name(), "mandate/") {
		t.Errorf("verifier key %q, name %q", k1.VerifierKey(), k1.Name())
	}
	if err := os.Chmod(filepath.Join(dir, KeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(dir); err == nil {
		t.Error("a key file others can read was accepted")
	}
}

func TestParseKeyErrors(t *testing.T) {
	for _, s := range []string{"", "garbage", "PRIVATE+KEY+x+00000000+AAAA", "mandate/x+12345678+AQID"} {
		if _, err := ParseKey(s); err == nil {
			t.Errorf("ParseKey(%q): no error", s)
		}
	}
}

func TestCheckpointSignOpen(t *testing.T) {
	_, k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	root := bytes.Repeat([]byte{7}, 32)
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	cp, err := k.sign(42, root, at)
	if err != nil {
		t.Fatal(err)
	}
	got, err := OpenCheckpoint(cp.Note, k.Verifier())
	if err != nil {
		t.Fatal(err)
	}
	if got.Size != 42 || !bytes.Equal(got.Root, root) || !got.Time.Equal(at) || got.Origin != k.Name() {
		t.Errorf("opened %+v", got)
	}
	if !strings.HasPrefix(string(cp.Note), k.Name()+"\n42\n") {
		t.Errorf("note does not start with origin and size:\n%s", cp.Note)
	}

	_, other, _ := GenerateKey()
	if _, err := OpenCheckpoint(cp.Note, other.Verifier()); !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "not signed by key") {
		t.Errorf("another key: err = %v", err)
	}
	edited := bytes.Replace(cp.Note, []byte("\n42\n"), []byte("\n43\n"), 1)
	if _, err := OpenCheckpoint(edited, k.Verifier()); !errors.Is(err, ErrTampered) {
		t.Errorf("edited size: err = %v, want ErrTampered", err)
	}
	if _, err := OpenCheckpoint([]byte("not a note"), k.Verifier()); err == nil {
		t.Error("garbage note: no error")
	}
}

func TestNewVerifier(t *testing.T) {
	_, k, _ := GenerateKey()
	if v, err := NewVerifier(" " + k.VerifierKey() + "\n"); err != nil || v.Name() != k.Name() {
		t.Errorf("from string: %v, %v", v, err)
	}
	file := filepath.Join(t.TempDir(), "key.pub")
	os.WriteFile(file, []byte(k.VerifierKey()+"\n"), 0o644)
	if v, err := NewVerifier(file); err != nil || v.Name() != k.Name() {
		t.Errorf("from file: %v, %v", v, err)
	}
	for _, s := range []string{"", "nonsense", filepath.Join(t.TempDir(), "missing")} {
		if _, err := NewVerifier(s); err == nil {
			t.Errorf("NewVerifier(%q): no error", s)
		}
	}
}
