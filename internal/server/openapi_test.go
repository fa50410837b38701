package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOpenAPICoversEveryRoute holds the served document to the routes the
// server registers, both ways, so neither can drift.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	f := newFixture(t)
	srv := New(Options{Engine: f.a.Engine})
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	registered := map[string]bool{}
	for _, r := range srv.routes {
		method, path, _ := strings.Cut(r, " ")
		registered[strings.ToLower(method)+" "+path] = true
		if _, ok := doc.Paths[path][strings.ToLower(method)]; !ok {
			t.Errorf("route %s is served but not in openapi.json", r)
		}
	}
	for path, ops := range doc.Paths {
		if !strings.HasPrefix(path, "/v1/") || path == "/v1/openapi.json" {
			continue
		}
		for method := range ops {
			if method == "parameters" {
				continue
			}
			if !registered[method+" "+path] {
				t.Errorf("openapi.json documents %s %s, which is not served", strings.ToUpper(method), path)
			}
		}
	}
}
