package baseline

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// Version is the fingerprint of an agent's version: its model, system
// prompt hash, tool-set hash and retrieval source. A change of any of them
// is a new version.
func Version(model, promptHash, toolsetHash, retrieval string) string {
	h := sha256.New()
	for _, s := range []string{model, promptHash, toolsetHash, retrieval} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "v-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// ToolsetHash is the fingerprint of a tool set: "sha256:" over its sorted,
// distinct names ("" for none). Surfaces that see the agent's tools (the
// MCP gateway's listing, the tools a Claude Code session used) fill a
// version's tool-set hash with it; a description change is not a new
// version (tool pinning catches those).
func ToolsetHash(names []string) string {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	if len(sorted) > 0 && sorted[0] == "" {
		sorted = sorted[1:]
	}
	if len(sorted) == 0 {
		return ""
	}
	h := sha256.New()
	for _, n := range sorted {
		h.Write([]byte(n))
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
