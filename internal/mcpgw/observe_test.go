package mcpgw

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

func TestObservation(t *testing.T) {
	img := base64.StdEncoding.EncodeToString(make([]byte, 5000))
	tests := []struct {
		name   string
		result string
		max    int
		want   []string
		absent []string
	}{
		{"text kept", `{"content":[{"type":"text","text":"hello"}]}`, 1 << 10, []string{`"text":"hello"`}, nil},
		{"image digested", `{"content":[{"type":"image","data":"` + img + `","mimeType":"image/png"}]}`, 1 << 20, []string{`"omitted":"binary"`, `"bytes":5000`, `"mimeType":"image/png"`}, []string{img[:40]}},
		{"blob digested", `{"content":[{"type":"resource","resource":{"uri":"f://x","blob":"` + img + `"}}]}`, 1 << 20, []string{`"omitted":"binary"`, `"uri":"f://x"`}, []string{img[:40]}},
		{"large text summarised", `{"content":[{"type":"text","text":"` + strings.Repeat("é", 3000) + `"}],"isError":true}`, 1000, []string{`"truncated":true`, `"isError":true`, `"sha256"`}, nil},
		{"text that grows when escaped", `{"content":[{"type":"text","text":"` + strings.Repeat(`\u0001`, 3000) + `"}]}`, 400, []string{`"truncated":true`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(tt.result), &v); err != nil {
				t.Fatal(err)
			}
			out, err := observation(v, tt.max)
			if err != nil {
				t.Fatal(err)
			}
			if len(out) > tt.max || !json.Valid(out) {
				t.Fatalf("%d bytes (max %d), valid %v", len(out), tt.max, json.Valid(out))
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("lacks %s: %.300s", w, out)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(string(out), a) {
					t.Errorf("contains %s", a)
				}
			}
		})
	}
}

// FuzzObservation: whatever a server returns, the record is valid JSON
// within the limit.
func FuzzObservation(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"resource","resource":{"uri":"x","blob":"!!"}}],"isError":true}`,
		`{"content":"not a list"}`, `[]`, `null`, `"x"`, `{"content":[1,null,{"type":"image","data":7}]}`,
	} {
		f.Add(s, 200)
	}
	f.Fuzz(func(t *testing.T, result string, max int) {
		var v any
		if json.Unmarshal([]byte(result), &v) != nil {
			return
		}
		if max < 256 || max > 1<<20 {
			max = 256 + max&0xffff
		}
		out, err := observation(v, max)
		if err != nil {
			return
		}
		if !json.Valid(out) || len(out) > max {
			t.Fatalf("%d bytes (max %d), valid %v: %.200s", len(out), max, json.Valid(out), out)
		}
	})
}
