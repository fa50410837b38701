package server

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mandate-dev/mandate/internal/evidence"
	"github.com/mandate-dev/mandate/internal/store"
)

// summaryRecords counts the session's recorded summaries in the evidence
// log.
func (f *fixture) summaryRecords(t *testing.T, sid string) int {
	t.Helper()
	recs, err := f.a.Store.SessionEvidence(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if r.Type != "behaviour" {
			continue
		}
		env, err := evidence.ParseBody(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		var b store.BehaviourRecord
		if err := json.Unmarshal(env.Content, &b); err != nil {
			t.Fatal(err)
		}
		if b.Type == "summary" {
			n++
		}
	}
	return n
}

// TestSummaryRecordedOnCompletion: completing a session records its
// summary once, as an evidence record the log verifies, and the route
// then returns that record; repeated end events record nothing more, and
// a session that never completes has no recorded summary.
func TestSummaryRecordedOnCompletion(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	done, open := f.session(t, "mailer", "Read my inbox."), f.session(t, "mailer", "Read my inbox.")
	for _, sid := range []string{done, open} {
		body := `{"session_id":"` + sid + `","tool":"Read","args":{"file_path":"/home/u/inbox/1.eml"}}`
		if code, out := f.do(t, "POST", "/v1/evaluate", "user", body); code != 200 {
			t.Fatalf("evaluate: %d %v", code, out)
		}
	}
	code, live := f.do(t, "GET", "/v1/sessions/"+done+"/summary", "user", "")
	if code != 200 || live["recorded"] != nil {
		t.Fatalf("summary before completion: %d %v", code, live)
	}
	for range 3 { // a SessionEnd hook event may come more than once
		if code, out := f.do(t, "POST", "/v1/sessions/"+done+"/status", "hook:mailer", `{"status":"completed"}`); code != 200 {
			t.Fatalf("complete: %d %v", code, out)
		}
	}
	if n := f.summaryRecords(t, done); n != 1 {
		t.Fatalf("completed session: %d summary records, want 1", n)
	}
	if n := f.summaryRecords(t, open); n != 0 {
		t.Fatalf("open session: %d summary records, want 0", n)
	}
	code, out := f.do(t, "GET", "/v1/sessions/"+done+"/summary", "user", "")
	rec, _ := out["recorded"].(map[string]any)
	if code != 200 || rec == nil || out["status"] != "completed" || out["calls"] != float64(1) {
		t.Fatalf("summary after completion: %d %v", code, out)
	}
	idx := uint64(rec["evidence_index"].(float64))
	recs, err := f.a.Store.EvidenceRange(ctx, idx, idx+1)
	if err != nil || len(recs) != 1 || recs[0].SessionID != done || recs[0].Type != "behaviour" {
		t.Fatalf("evidence record %d: %v %v", idx, recs, err)
	}
	for _, k := range []string{"kinds", "destinations", "asked", "denied", "gaps", "signals"} {
		a, _ := json.Marshal(live[k])
		b, _ := json.Marshal(out[k])
		if string(a) != string(b) {
			t.Errorf("%s: recorded %s, computed before completion %s", k, b, a)
		}
	}
	if code, out := f.do(t, "GET", "/v1/sessions/"+open+"/summary", "user", ""); code != 200 || out["recorded"] != nil {
		t.Fatalf("open session's summary: %d %v", code, out)
	}
	// Taken up again and completed with nothing new: still one record.
	for _, st := range []string{"active", "completed"} {
		if code, out := f.do(t, "POST", "/v1/sessions/"+done+"/status", "user", `{"status":"`+st+`"}`); code != 200 {
			t.Fatalf("%s: %d %v", st, code, out)
		}
	}
	if n := f.summaryRecords(t, done); n != 1 {
		t.Fatalf("completed again with nothing new: %d summary records, want 1", n)
	}
	if _, err := evidence.VerifyStore(ctx, f.a.Store, f.a.Evidence.Key().Verifier(), nil); err != nil {
		t.Fatalf("verify: %v", err)
	}
}
