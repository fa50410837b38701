package hook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mandate-dev/mandate/api"
)

// The agent version a Claude Code session records (docs/behaviour.md): the
// model where the event carries it (SessionStart does), and a hash of what
// instructs the agent — the CLAUDE.md memory files and the settings files —
// where the hook can read them. A change of either is a new version of the
// agent, and its baseline compares the two.

// instructionFiles are the files that instruct Claude Code in a project,
// relative to the working directory, and in the user's home.
var (
	projectInstructionFiles = []string{"CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md", ".claude/settings.json", ".claude/settings.local.json"}
	homeInstructionFiles    = []string{".claude/CLAUDE.md", ".claude/settings.json"}
)

// maxInstructionBytes bounds what is read of one instruction file; past it
// the hash covers the first part and the file's size.
const maxInstructionBytes = 1 << 20

// instructionsHash hashes the instruction files that exist under cwd and
// home, with their names; "" when none could be read. Files that cannot be
// read are left out (the hook must never fail a call for them).
func instructionsHash(cwd, home string) string {
	h := sha256.New()
	n := 0
	add := func(dir, rel string) {
		if dir == "" || !filepath.IsAbs(dir) {
			return
		}
		p := filepath.Join(dir, rel)
		f, err := os.Open(p)
		if err != nil {
			return
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil || !st.Mode().IsRegular() {
			return
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, st.Size())
		if _, err := io.Copy(h, io.LimitReader(f, maxInstructionBytes)); err != nil && !errors.Is(err, fs.ErrClosed) {
			return
		}
		h.Write([]byte{0})
		n++
	}
	for _, rel := range projectInstructionFiles {
		add(cwd, rel)
	}
	if home != cwd {
		for _, rel := range homeInstructionFiles {
			add(home, rel)
		}
	}
	if n == 0 {
		return ""
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// agentOf is the agent version of a session the hook creates for ev; nil
// when the hook knows nothing of it.
func (h *ClaudeCode) agentOf(ev *Event) *api.Agent {
	a := &api.Agent{ID: h.agentID(), Model: boundedModel(ev.Model), SystemPromptHash: instructionsHash(ev.Cwd, h.HomeDir)}
	if a.Model == "" && a.SystemPromptHash == "" {
		return nil
	}
	return a
}

// boundedModel is the model an event names — a string, or an object's
// "id" — bounded; "" for anything else.
func boundedModel(raw json.RawMessage) string {
	var m string
	if json.Unmarshal(raw, &m) != nil {
		var obj struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &obj) != nil {
			return ""
		}
		m = obj.ID
	}
	m = strings.TrimSpace(m)
	if len(m) > 128 {
		m = strings.ToValidUTF8(m[:128], "")
	}
	return m
}
