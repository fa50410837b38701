package events

import (
	"testing"
)

func drain(s *Subscription) []string {
	var out []string
	for {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				return out
			}
			out = append(out, ev.Type)
		default:
			return out
		}
	}
}

func TestFiltersAndAudiences(t *testing.T) {
	b := New(Options{})
	all, _ := b.Subscribe(Filter{}, "")
	approver, _ := b.Subscribe(Filter{Audience: Approvers}, "")
	one, _ := b.Subscribe(Filter{SessionID: "s2", Types: []string{"decision"}}, "")
	b.Publish("decision", "s1", map[string]int{"n": 1})
	b.Publish("approval", "s1", nil)
	b.Publish("gap", "s2", nil)
	b.Publish("decision", "s2", nil)
	if got := drain(all); len(got) != 4 {
		t.Errorf("reader got %v", got)
	}
	if got := drain(approver); len(got) != 1 || got[0] != "approval" {
		t.Errorf("approver got %v", got)
	}
	if got := drain(one); len(got) != 1 || got[0] != "decision" {
		t.Errorf("filtered got %v", got)
	}
	if err := b.Check(Filter{Types: []string{"decision", "nope"}}); err == nil {
		t.Error("an unknown type passed")
	}
}

func TestEveryTypeIsDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, ty := range Types() {
		if ty.Name == "" || ty.Doc == "" || seen[ty.Name] {
			t.Errorf("type %+v", ty)
		}
		seen[ty.Name] = true
	}
	for _, name := range []string{"decision", "approval", "approval.answered", "gap"} {
		if !seen[name] {
			t.Errorf("the contract's event %q is missing", name)
		}
	}
}

func TestReplayAndLag(t *testing.T) {
	b := New(Options{Ring: 8, Buffer: 4})
	first, _ := b.Subscribe(Filter{}, "")
	b.Publish("decision", "s", 1)
	ev := <-first.Events()
	first.Close()
	b.Publish("approval", "s", 2)
	b.Publish("gap", "s", 3)
	again, ok := b.Subscribe(Filter{}, ev.ID)
	if !ok {
		t.Fatal("could not replay")
	}
	if got := drain(again); len(got) != 2 || got[0] != "approval" || got[1] != "gap" {
		t.Errorf("replayed %v", got)
	}
	data, err := ev.Data()
	if err != nil || string(data) != "1" {
		t.Errorf("data %s %v", data, err)
	}
	// Fall behind: cut off, told so.
	for range 10 {
		b.Publish("decision", "s", 0)
	}
	if !again.Lagged() {
		t.Error("a subscriber 10 events behind with a buffer of 4 was not cut off")
	}
	// Too old to replay: say so.
	if _, ok := b.Subscribe(Filter{}, ev.ID); ok {
		t.Error("replayed past the ring")
	}
	if _, ok := b.Subscribe(Filter{}, "other-run-1"); ok {
		t.Error("replayed another run's id")
	}
}
