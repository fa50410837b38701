package events

import "testing"

// TestRemoteEvents: an event another server committed reaches this
// server's streams, marked Remote, but not a LocalOnly subscriber (the
// webhooks, which that server delivers itself).
func TestRemoteEvents(t *testing.T) {
	b := New(Options{})
	stream, _ := b.Subscribe(Filter{}, "")
	hooks, _ := b.Subscribe(Filter{LocalOnly: true}, "")
	b.Publish("approval", "s", 1)
	b.PublishRemote("approval.answered", "s", 2)
	if got := drain(stream); len(got) != 2 || got[1] != "approval.answered" {
		t.Errorf("stream got %v", got)
	}
	if got := drain(hooks); len(got) != 1 || got[0] != "approval" {
		t.Errorf("a local-only subscriber got %v", got)
	}
	// Replayed after a reconnect, the mark holds.
	again, replayed := b.Subscribe(Filter{LocalOnly: true}, b.epoch+"-0")
	if !replayed {
		t.Fatal("no replay")
	}
	if got := drain(again); len(got) != 1 || got[0] != "approval" {
		t.Errorf("replayed to a local-only subscriber: %v", got)
	}
}
