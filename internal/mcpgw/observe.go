package mcpgw

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// observation is what the gateway records of a tool's result: the result as
// the agent receives it, except that binary payloads (images, audio, blob
// resources) are replaced by their size and SHA-256 — provenance needs the
// words a result carried, not its pixels — and a result still larger than
// max is cut to a summary with its text's beginning.
func observation(result any, max int) (json.RawMessage, error) {
	raw, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("decode result: %w", err)
	}
	changed := false
	if content, ok := v["content"].([]any); ok {
		for _, c := range content {
			if digestBinary(c) {
				changed = true
			}
		}
	}
	if changed {
		if raw, err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("encode result: %w", err)
		}
	}
	if len(raw) <= max {
		return raw, nil
	}
	sum := sha256.Sum256(raw)
	summary := map[string]any{
		"truncated": true,
		"bytes":     len(raw),
		"sha256":    hex.EncodeToString(sum[:]),
		"isError":   v["isError"] == true,
	}
	var text strings.Builder
	if content, ok := v["content"].([]any); ok {
		for _, c := range content {
			if m, ok := c.(map[string]any); ok {
				if s, ok := m["text"].(string); ok {
					text.WriteString(s)
					text.WriteByte('\n')
				}
			}
		}
	}
	// Keep as much of the text as fits once escaped.
	all := text.String()
	for n := max / 2; ; n /= 2 {
		summary["text"] = cutUTF8(all, n)
		out, err := json.Marshal(summary)
		if err != nil || len(out) <= max || n == 0 {
			return out, err
		}
	}
}

// digestBinary replaces a content item's binary payload with its digest and
// reports whether it did.
func digestBinary(c any) bool {
	m, ok := c.(map[string]any)
	if !ok {
		return false
	}
	switch m["type"] {
	case "image", "audio":
		if s, ok := m["data"].(string); ok {
			m["data"] = digest(s)
			return true
		}
	case "resource":
		if r, ok := m["resource"].(map[string]any); ok {
			if s, ok := r["blob"].(string); ok {
				r["blob"] = digest(s)
				return true
			}
		}
	}
	return false
}

func digest(b64 string) map[string]any {
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		data = []byte(b64) // not valid base64: digest what was sent
	}
	sum := sha256.Sum256(data)
	return map[string]any{"omitted": "binary", "bytes": len(data), "sha256": hex.EncodeToString(sum[:])}
}

func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
