package cli

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// TestProgressQuietWhenPiped: a progress line never goes to a pipe or a
// buffer, only to a terminal.
func TestProgressQuietWhenPiped(t *testing.T) {
	var buf bytes.Buffer
	p := startProgress(&buf, "eval", 10, "episodes")
	p.Add(5)
	time.Sleep(300 * time.Millisecond)
	p.Stop()
	if buf.Len() != 0 {
		t.Fatalf("wrote %q to a buffer", buf.String())
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if isTerminal(w) {
		t.Fatal("a pipe is taken for a terminal")
	}
	w.Close()
}

// TestProgressLine draws the line as a terminal would get it.
func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	p := &progress{w: &buf, label: "eval", total: 8, unit: "episodes", start: time.Now()}
	p.Add(2)
	p.draw()
	if got := buf.String(); !bytes.Contains([]byte(got), []byte("eval: 2 of 8 episodes (25%)")) {
		t.Fatalf("line %q", got)
	}
}
