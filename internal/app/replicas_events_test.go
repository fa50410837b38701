package app

import (
	"context"
	"testing"
	"time"

	"github.com/mandate-dev/mandate/internal/approval"
	"github.com/mandate-dev/mandate/internal/engine"
	"github.com/mandate-dev/mandate/internal/events"
	"github.com/mandate-dev/mandate/internal/store/postgres/pgtest"
)

// TestApprovalEventsAcrossReplicas: a dashboard following /v1/events on
// one replica sees the approvals another replica created and the answers
// it took (marked remote); the webhooks' subscription (local only) does
// not, since the replica where they happened delivers them.
func TestApprovalEventsAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	var (
		apps  []*App
		buses []*events.Bus
	)
	first := t.TempDir()
	for i := range 2 {
		dir := first
		if i > 0 {
			dir = withKeysOf(t, first)
		}
		bus := events.New(events.Options{})
		a, err := Open(ctx, Config{DataDir: dir, Store: dsn, Approvals: engine.ApprovalOptions{Events: bus}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		apps, buses = append(apps, a), append(buses, bus)
	}
	runApprovals(t, apps)
	stream, _ := buses[0].Subscribe(events.Filter{Types: []string{"approval", "approval.answered"}}, "")
	own, _ := buses[1].Subscribe(events.Filter{Types: []string{"approval", "approval.answered"}}, "")
	defer own.Close()
	hooks, _ := buses[0].Subscribe(events.Filter{Types: []string{"approval", "approval.answered"}, LocalOnly: true}, "")
	defer stream.Close()
	defer hooks.Close()

	mailSession(t, apps[1], "e")
	d := sendEve(t, apps[1], "e", 0)
	if _, err := apps[1].Engine.Answer(ctx, approver, d.ApprovalID, engine.AnswerRequest{Answer: approval.Answer{Decision: approval.Deny, Note: "no"}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"approval", "approval.answered"} {
		select {
		case ev := <-stream.Events():
			if ev.Type != want || !ev.Remote || ev.SessionID != "e" {
				t.Errorf("replica 1's stream: %s remote=%v session %s, want %s from replica 2", ev.Type, ev.Remote, ev.SessionID, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("replica 1's stream never saw %s made through replica 2", want)
		}
	}
	// Replica 2's own stream has each event once, not again from the
	// database's announcement.
	for _, want := range []string{"approval", "approval.answered"} {
		select {
		case ev := <-own.Events():
			if ev.Type != want || ev.Remote {
				t.Errorf("replica 2's stream: %s remote=%v, want its own %s", ev.Type, ev.Remote, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("replica 2's stream lacks %s", want)
		}
	}
	select {
	case ev := <-own.Events():
		t.Errorf("replica 2's stream got %s twice (remote=%v)", ev.Type, ev.Remote)
	case ev := <-hooks.Events():
		t.Errorf("the webhooks of replica 1 got %s made through replica 2: it would be delivered twice", ev.Type)
	case <-time.After(200 * time.Millisecond):
	}
}
