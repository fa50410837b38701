package server

import (
	"testing"
	"time"
)

// TestEventStreamGap: a result of a call that ran without Mandate's allow
// is a gap event on /v1/events (issue 13's interface names decision,
// approval, approval.answered and gap); an approver's stream does not carry
// it.
func TestEventStreamGap(t *testing.T) {
	f := newApprovalFixture(t)
	f.codingSession(t, "cc:g1")
	gaps := f.stream(t, "user", "?types=gap", "")
	appr := f.stream(t, "approver", "", "")
	gc, ac := make(chan sseEvent, 2), make(chan sseEvent, 2)
	go readEvents(t, gaps, 1, gc)
	go readEvents(t, appr, 1, ac)
	code, out := f.do(t, "POST", "/v1/observe", "hook", `{"session_id":"cc:g1","call_id":"toolu_9","tool":"Bash","args":{"command":"ls"},"output":{"stdout":"a"}}`)
	if code != 200 || out["gap"] != true {
		t.Fatalf("observe: %d %v", code, out)
	}
	select {
	case ev := <-gc:
		if ev.typ != "gap" || ev.data["session_id"] != "cc:g1" || ev.data["tool"] != "Bash" || ev.data["gap"] != true {
			t.Errorf("gap event %+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no gap event")
	}
	select {
	case ev := <-ac:
		t.Errorf("the approver's stream carried %s", ev.typ)
	case <-time.After(100 * time.Millisecond):
	}
}
