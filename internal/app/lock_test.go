//go:build unix

package app

import (
	"context"
	"strings"
	"testing"
)

func TestOneProcessPerDataDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, err := Open(ctx, Config{DataDir: dir, Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, Config{DataDir: dir, Synchronous: "OFF"})
	if err == nil || !strings.Contains(err.Error(), "in use") || !strings.Contains(err.Error(), "--server") {
		t.Fatalf("second open of the same data directory: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := Open(ctx, Config{DataDir: dir, Synchronous: "OFF"})
	if err != nil {
		t.Fatalf("the lock must be released on Close: %v", err)
	}
	b.Close()
}
