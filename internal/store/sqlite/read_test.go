package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/store"
)

func TestDecisionByCallAndGaps(t *testing.T) {
	ctx := context.Background()
	s, path := seeded(t, Options{}, newSession("s1"), newSession("s2"))
	// Two decisions for the same call id (a retried hook): the later wins.
	for seq, callID := range map[int]string{1: "toolu_1", 2: "toolu_1", 3: ""} {
		c := decision("s1", seq)
		c.Decision.CallID = callID
		c.Evidence = nil
		recorded(c)
		if err := store.Apply(ctx, s, c); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Unix(1700000000, 0).UTC()
	obs := []*store.Observation{
		{ID: "o1", DecisionID: "s1-d2", SessionID: "s1", Output: json.RawMessage(`"ok"`), Origin: "observed", CallID: "toolu_1", CreatedAt: now},
		{ID: "o2", SessionID: "s1", Output: json.RawMessage(`{"x":1}`), Origin: "observed", CallID: "toolu_9",
			Gap: true, GapReason: "never decided", Tool: "Bash", Args: json.RawMessage(`{"command":"ls"}`), CreatedAt: now},
		{ID: "o3", SessionID: "s2", Output: json.RawMessage(`null`), Origin: "observed",
			Gap: true, GapReason: "never decided", Tool: "Read", CreatedAt: now.Add(time.Second)},
	}
	for _, o := range obs {
		if err := store.Apply(ctx, s, recorded(&store.Change{Observation: o})); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path, Options{})

	d, err := s.DecisionByCall(ctx, "s1", "toolu_1")
	if err != nil || d.ID != "s1-d2" || d.CallID != "toolu_1" {
		t.Fatalf("DecisionByCall: %+v, %v", d, err)
	}
	for _, tc := range []struct{ sess, call string }{{"s1", "toolu_9"}, {"s2", "toolu_1"}, {"s1", ""}} {
		if _, err := s.DecisionByCall(ctx, tc.sess, tc.call); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DecisionByCall(%q, %q): got %v, want ErrNotFound", tc.sess, tc.call, err)
		}
	}
	if got, err := s.GetDecision(ctx, "s1-d3"); err != nil || got.CallID != "" {
		t.Fatalf("decision without call id: %+v, %v", got, err)
	}

	all, err := s.ListGaps(ctx, store.GapFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].ID != "o3" || all[1].ID != "o2" {
		t.Fatalf("ListGaps: want o3, o2 newest first, got %+v", all)
	}
	g := all[1]
	if !g.Gap || g.GapReason != "never decided" || g.Tool != "Bash" || string(g.Args) != `{"command":"ls"}` || g.CallID != "toolu_9" || g.DecisionID != "" {
		t.Fatalf("gap fields after reopen: %+v", g)
	}
	if all[0].Args != nil {
		t.Fatalf("a gap without args reads back with args %q", all[0].Args)
	}
	one, err := s.ListGaps(ctx, store.GapFilter{SessionID: "s1", Limit: 10})
	if err != nil || len(one) != 1 || one[0].ID != "o2" {
		t.Fatalf("ListGaps(s1): %+v, %v", one, err)
	}
	list, err := s.ListObservations(ctx, "s1-d2")
	if err != nil || len(list) != 1 || list[0].Gap || list[0].CallID != "toolu_1" {
		t.Fatalf("ListObservations: %+v, %v", list, err)
	}
}

func TestToolPinsAndChanges(t *testing.T) {
	ctx := context.Background()
	s, path := seeded(t, Options{}, newSession("s1"))
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
