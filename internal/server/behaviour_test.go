package server

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

func TestBehaviourRoutes(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var last, lastSession string
	for i := range 3 {
		sid := f.session(t, "mailer", "Read my inbox and summarise it.")
		for _, body := range []string{
			`{"session_id":"` + sid + `","tool":"Read","args":{"file_path":"/home/u/inbox/1.eml"}}`,
			`{"session_id":"` + sid + `","tool":"WebFetch","args":{"url":"https://news.example/a","prompt":"summarise"}}`,
		} {
			code, out := f.do(t, "POST", "/v1/evaluate", "user", body)
			if code != 200 {
				t.Fatalf("evaluate: %d %v", code, out)
			}
			if sig, _ := out["signals"].([]any); len(sig) < 2 {
				t.Fatalf("decision %d of session %d: signals %v", len(sig), i, out["signals"])
			}
			last, lastSession = out["decision_id"].(string), sid
		}
	}
	if err := f.a.Engine.FlushBaselines(ctx); err != nil {
		t.Fatal(err)
	}
	code, out := f.do(t, "GET", "/v1/agents", "user", "")
	if agents, _ := out["agents"].([]any); code != 200 || len(agents) != 1 {
		t.Fatalf("agents: %d %v", code, out)
	}
	code, out = f.do(t, "GET", "/v1/agents/mailer", "user", "")
	if code != 200 || out["state"] != "learning" || out["sessions"] != float64(3) || len(out["versions"].([]any)) != 1 {
		t.Fatalf("agent: %d %v", code, out)
	}
	for _, path := range []string{"/v1/agents/nobody", "/v1/agents/nobody/drift", "/v1/agents/nobody/review", "/v1/decisions/nope/trace", "/v1/sessions/nope/summary"} {
		if code, out := f.do(t, "GET", path, "user", ""); code != http.StatusNotFound {
			t.Errorf("%s: %d %v, want 404", path, code, out)
		}
	}
	code, out = f.do(t, "GET", "/v1/agents/mailer/drift", "user", "")
	if code != 200 || out["agent"] != "mailer" {
		t.Fatalf("drift: %d %v", code, out)
	}
	code, out = f.do(t, "GET", "/v1/agents/mailer/review", "user", "")
	if code != 200 || out["sessions"] != float64(3) {
		t.Fatalf("review: %d %v", code, out)
	}
	code, out = f.do(t, "GET", "/v1/decisions/"+last+"/trace", "user", "")
	if steps, _ := out["steps"].([]any); code != 200 || len(steps) != 2 || out["decision_id"] != last {
		t.Fatalf("trace: %d %v", code, out)
	}
	code, out = f.do(t, "GET", "/v1/sessions/"+lastSession+"/summary", "user", "")
	if code != 200 || out["calls"] != float64(2) {
		t.Fatalf("summary: %d %v", code, out)
	}
	// Resetting needs an admin, and an action it knows.
	if code, _ := f.do(t, "POST", "/v1/agents/mailer/baseline", "user", `{"action":"reset"}`); code != http.StatusForbidden {
		t.Fatalf("a user's reset: %d, want 403", code)
	}
	if code, _ := f.do(t, "POST", "/v1/agents/mailer/baseline", "admin", `{"action":"forget"}`); code != http.StatusBadRequest {
		t.Fatalf("an unknown action: %d, want 400", code)
	}
	code, out = f.do(t, "POST", "/v1/agents/mailer/baseline", "admin", `{"action":"freeze"}`)
	if code != 200 || out["state"] != "frozen" {
		t.Fatalf("freeze: %d %v", code, out)
	}
	code, out = f.do(t, "POST", "/v1/agents/mailer/baseline", "admin", `{"action":"reset"}`)
	if code != 200 || out["calls"] != float64(0) || out["state"] != "frozen" {
		t.Fatalf("reset: %d %v", code, fmt.Sprint(out))
	}
}
