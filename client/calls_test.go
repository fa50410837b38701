package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mandate-dev/mandate/client"
)

// TestRequests checks what the call-id methods send and how errors come
// back, against a recording server.
func TestRequests(t *testing.T) {
	var got struct {
		method, path, query, auth string
		body                      map[string]any
	}
	status, reply := http.StatusOK, `{}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path, got.query, got.auth = r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization")
		got.body = nil
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &got.body)
		w.WriteHeader(status)
		w.Write([]byte(reply))
	}))
	defer srv.Close()
	ctx := context.Background()
	c := client.New(srv.URL+"/", " tok ")

	reply = `{"decision_id":"d1","effect":"allow"}`
	d, err := c.EvaluateCall(ctx, client.Call{SessionID: "s", Tool: "Read", CallID: "toolu_1"})
	if err != nil || d.ID != "d1" || got.path != "/v1/evaluate" || got.auth != "Bearer tok" ||
		got.body["call_id"] != "toolu_1" || got.body["args"] == nil {
		t.Fatalf("EvaluateCall: %+v %v; sent %+v", d, err, got)
	}
	if _, err := c.Evaluate(ctx, "s", "Read", nil); err != nil || got.body["call_id"] != nil {
		t.Fatalf("Evaluate sent a call id: %+v", got.body)
	}

	reply = `{"observation_id":"o1","session_id":"s","gap":true,"gap_reason":"never decided"}`
	o, err := c.ObserveCall(ctx, client.Call{SessionID: "s", Tool: "Bash", Args: json.RawMessage(`{"command":"ls"}`), CallID: "c"}, "out")
	if err != nil || !o.Gap || o.GapReason != "never decided" || got.path != "/v1/observe" ||
		got.body["tool"] != "Bash" || got.body["args"].(map[string]any)["command"] != "ls" || got.body["output"] != "out" {
		t.Fatalf("ObserveCall: %+v %v; sent %+v", o, err, got.body)
	}

	reply = `{"gaps":[{"observation_id":"o1","tool":"Bash"}]}`
	gaps, err := c.Gaps(ctx, "s 1", 5)
	if err != nil || len(gaps) != 1 || got.method != "GET" || got.path != "/v1/gaps" || got.query != "limit=5&session_id=s+1" {
		t.Fatalf("Gaps: %+v %v; %s?%s", gaps, err, got.path, got.query)
	}

	status, reply = http.StatusCreated, `{"session_id":"cc:p:agent:a","launch_id":"cc:p:task:t"}`
	sub, err := c.StartSubagent(ctx, "cc:p", client.SubagentRequest{SessionID: "cc:p:agent:a", AgentID: "x", LaunchPrefix: "cc:p:task:"})
	if err != nil || sub.LaunchID != "cc:p:task:t" || sub.SessionID != "cc:p:agent:a" || got.path != "/v1/sessions/cc:p/subagents" || got.body["launch_prefix"] != "cc:p:task:" {
		t.Fatalf("StartSubagent: %+v %v; %s %+v", sub, err, got.path, got.body)
	}

	status, reply = http.StatusConflict, `{"error":{"code":"conflict","message":"already exists: session x"}}`
	_, err = c.StartSubagent(ctx, "p", client.SubagentRequest{SessionID: "x"})
	var ae *client.APIError
	if !client.IsConflict(err) || !errors.As(err, &ae) || ae.Code != "conflict" || ae.Message != "already exists: session x" {
		t.Fatalf("conflict: %v", err)
	}
	status, reply = http.StatusServiceUnavailable, `down`
	if err := c.Health(ctx); err == nil || client.IsNotFound(err) || !errors.As(err, &ae) || ae.Message != "down" {
		t.Fatalf("Health of a failing server: %v", err)
	}
	status, reply = http.StatusOK, `{"status":"ok"}`
	if err := c.Health(ctx); err != nil || got.path != "/healthz" {
		t.Fatalf("Health: %v %s", err, got.path)
	}
}
