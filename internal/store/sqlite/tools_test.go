package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
)

func TestToolPinsAndChanges(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s := open(t, path, Options{})
	if err := store.Apply(ctx, s, newSession("s1")); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0).UTC()
	pins := recorded(&store.Change{ToolPins: []*store.ToolPin{
		{SessionID: "s1", Tool: "b", Hash: "h-b", Definition: json.RawMessage(`{"name":"b"}`), CreatedAt: now},
		{SessionID: "s1", Tool: "a", Hash: "h-a", Definition: json.RawMessage(`{"name":"a"}`), CreatedAt: now},
	}})
	if err := store.Apply(ctx, s, pins); err != nil {
		t.Fatal(err)
	}
	// A second pin of the same tool is a conflict: pins are made once.
	dup := &store.Change{ToolPins: []*store.ToolPin{{SessionID: "s1", Tool: "a", Hash: "other", CreatedAt: now}}}
	if err := store.Apply(ctx, s, dup); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate pin: got %v, want ErrConflict", err)
	}
	// Pins need their session.
	orphan := &store.Change{ToolPins: []*store.ToolPin{{SessionID: "nope", Tool: "a", Hash: "h", CreatedAt: now}}}
	if err := store.Apply(ctx, s, orphan); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("pin without session: got %v, want ErrConflict", err)
	}
	chg := recorded(&store.Change{ToolChanges: []*store.ToolChange{
		{ID: "c1", SessionID: "s1", Tool: "a", PinnedHash: "h-a", Hash: "h-a2", Definition: json.RawMessage(`{"name":"a","description":"new"}`), CreatedAt: now},
	}})
	if err := store.Apply(ctx, s, chg); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path, Options{})
	got, err := s.ListToolPins(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Tool != "b" || got[1].Tool != "a" || got[1].Hash != "h-a" || string(got[1].Definition) != `{"name":"a"}` || !got[0].CreatedAt.Equal(now) {
		t.Fatalf("pins after reopen: %+v", got)
	}
	changes, err := s.ListToolChanges(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].ID != "c1" || changes[0].PinnedHash != "h-a" || changes[0].Hash != "h-a2" {
		t.Fatalf("changes after reopen: %+v", changes)
	}
	if other, err := s.ListToolPins(ctx, "s2"); err != nil || len(other) != 0 {
		t.Fatalf("pins of an unknown session: %v %v", other, err)
	}
}
