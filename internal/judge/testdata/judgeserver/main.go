// Command judgeserver is a small OpenAI-compatible chat-completions server
// for the judge's tests: they build it, start it as a separate process and
// script its answers. It is not part of Mandate.
//
//	judgeserver -script script.json -log requests.jsonl
//
// The script is a JSON list of rules, tried in order against the request's
// user message; the first whose "match" is a substring of it answers:
//
//	[{"match": "send_email", "content": "{\"decision\":\"allow\",\"reason\":\"named\"}"},
//	 {"match": "slow", "delay_ms": 3000, "content": "…"},
//	 {"match": "broken", "status": 500},
//	 {"match": "raw", "raw": "not json at all"}]
//
// Every request body is appended to -log as one JSON line. The server prints
// "listening on http://ADDR" once it accepts connections.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

type rule struct {
	Match   string `json:"match"`
	Content string `json:"content"`
	Status  int    `json:"status"`
	DelayMS int    `json:"delay_ms"`
	Raw     string `json:"raw"`
}

func main() {
	script := flag.String("script", "", "rules file (JSON)")
	logPath := flag.String("log", "", "append each request body here (JSON lines)")
	addr := flag.String("listen", "127.0.0.1:0", "address")
	flag.Parse()
	var rules []rule
	if *script != "" {
		b, err := os.ReadFile(*script)
		if err != nil {
			log.Fatal(err)
		}
		if err := json.Unmarshal(b, &rules); err != nil {
			log.Fatalf("script: %v", err)
		}
	}
	var mu sync.Mutex
	var logf *os.File
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			log.Fatal(err)
		}
		logf = f
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if logf != nil {
			mu.Lock()
			logf.Write(append(body, '\n'))
			mu.Unlock()
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		user := ""
		for _, m := range req.Messages {
			if m.Role == "user" {
				user = m.Content
			}
		}
		ru := rule{Content: `{"decision":"ask","reason":"no rule matched"}`}
		for _, x := range rules {
			if strings.Contains(user, x.Match) {
				ru = x
				break
			}
		}
		if ru.DelayMS > 0 {
			select {
			case <-time.After(time.Duration(ru.DelayMS) * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		if ru.Status != 0 && ru.Status != 200 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(ru.Status)
			fmt.Fprintf(w, `{"error":{"message":"scripted failure %d","type":"server_error"}}`, ru.Status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if ru.Raw != "" {
			io.WriteString(w, ru.Raw)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": ru.Content}}},
			"usage": map[string]int{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
		})
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
