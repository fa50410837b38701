package server

import (
	"net/http"
	"strconv"
	"testing"
)

// TestEveryRoute calls each route once as a reader or writer would; the
// fixture validates every answer against the OpenAPI document, and TestMain
// checks that each documented route answered successfully at least once in
// the package's tests.
func TestEveryRoute(t *testing.T) {
	f := newFixture(t)
	sid := f.session(t, "mailer", "Send the Q3 summary to alice@example.com")
	code, out := f.do(t, "POST", "/v1/evaluate", "agent:mailer", `{"session_id":"`+sid+`","tool":"send_email","args":{"to":"alice@example.com","subject":"Q3"}}`)
	if code != 200 {
		t.Fatalf("evaluate: %d %v", code, out)
	}
	for _, c := range []struct {
		method, path, who, body string
		want                    int
	}{
		{"GET", "/v1/sessions", "user", "", 200},
		{"GET", "/v1/sessions?agent_id=mailer&status=active&limit=5", "admin", "", 200},
		{"GET", "/v1/sessions/" + sid, "user", "", 200},
		{"GET", "/v1/sessions/" + sid + "/mandate", "user", "", 200},
		{"POST", "/v1/intent/compile", "user", `{"intent":"Read the logs, do not delete anything"}`, 200},
		{"GET", "/v1/evidence/checkpoint", "user", "", 200},
		{"GET", "/v1/evidence/checkpoint?format=note", "user", "", 200},
		{"GET", "/v1/evidence/records/0", "user", "", 200},
		{"GET", "/v1/evidence/consistency?from=1", "user", "", 200},
		{"GET", "/v1/evidence/sessions/" + sid + "/bundle", "user", "", 200},
		{"POST", "/v1/sessions/" + sid + "/status", "hook:mailer", `{"status":"suspended"}`, 200},
		{"GET", "/v1/whoami", "agent:mailer", "", 200},
		{"GET", "/healthz", "", "", 200},
		{"GET", "/metrics", "", "", 200},
	} {
		req, _ := http.NewRequest(c.method, f.srv.URL+c.path, nil)
		if c.body != "" {
			code, out := f.do(t, c.method, c.path, c.who, c.body)
			if code != c.want {
				t.Errorf("%s %s: %d %v", c.method, c.path, code, out)
			}
			continue
		}
		if c.who != "" {
			req.Header.Set("Authorization", "Bearer "+f.tokens[c.who])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s: %d, want %s", c.method, c.path, resp.StatusCode, strconv.Itoa(c.want))
		}
	}
}
