package servetest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Load's stop returns only after every worker has returned, and every
// worker was called with its own number and counting from 0.
func TestLoadStopWaits(t *testing.T) {
	var mu sync.Mutex
	first := map[int]int{}
	calls := 0
	enough := make(chan struct{})
	tell := sync.OnceFunc(func() { close(enough) })
	stop := Load(3, func(w, i int) {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := first[w]; !ok {
			first[w] = i
		}
		calls++
		if len(first) == 3 && calls >= 30 {
			tell()
		}
	})
	<-enough
	stop()
	mu.Lock()
	after := calls
	mu.Unlock()
	stop() // a second stop is harmless
	mu.Lock()
	defer mu.Unlock()
	if calls != after {
		t.Errorf("%d calls after stop returned", calls-after)
	}
	for w := range 3 {
		if i, ok := first[w]; !ok || i != 0 {
			t.Errorf("worker %d: first call %d (%v)", w, i, ok)
		}
	}
}

// Post sends the token and reads a JSON object; an answer that is not one
// is an error naming its status.
func TestPost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"no token"}`))
			return
		}
		if r.URL.Path == "/text" {
			w.Write([]byte("not json"))
			return
		}
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"session_id":"s1"}`))
	}))
	defer srv.Close()
	a, err := Post(srv.Client(), srv.URL, "tok", "/v1/sessions", `{}`)
	if err != nil || a.Code != http.StatusCreated || a.Body["session_id"] != "s1" {
		t.Fatalf("got %+v %v", a, err)
	}
	if a, err := Post(srv.Client(), srv.URL, "other", "/v1/sessions", `{}`); err != nil || a.Code != http.StatusUnauthorized {
		t.Errorf("wrong token: %+v %v", a, err)
	}
	if _, err := Post(srv.Client(), srv.URL, "tok", "/text", `{}`); err == nil {
		t.Error("a reply that is not JSON was taken")
	}
}
