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
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/api"
	"github.com/mandate-dev/mandate/internal/baseline"
)

// The agent version a Claude Code session records (docs/behaviour.md): the
// model where the event carries it (SessionStart does), a hash of what
// instructs the agent — the CLAUDE.md memory files and the settings files —
// where the hook can read them, and the tool set the settings configure
// (the tools they allow, ask for or deny, and the MCP servers of the
// project's .mcp.json and the settings). A change of any is a new version
// of the agent, and its baseline compares the two. The hook is a process
// per event and the session's version is fixed when it is created, so the
// tool set is what the configuration says, not what the session goes on to
// use (that is in the baseline).

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
	a := &api.Agent{ID: h.agentID(), Model: boundedModel(ev.Model), SystemPromptHash: instructionsHash(ev.Cwd, h.HomeDir),
		ToolsetHash: settingsToolset(ev.Cwd, h.HomeDir)}
	if a.Model == "" && a.SystemPromptHash == "" && a.ToolsetHash == "" {
		return nil
	}
	return a
}

// Where the tool set is configured: the settings files' permissions and MCP
// server switches, and the project's .mcp.json servers.
var (
	projectSettingsFiles = []string{".claude/settings.json", ".claude/settings.local.json"}
	homeSettingsFiles    = []string{".claude/settings.json"}
	projectMCPFile       = ".mcp.json"
)

// maxToolsetNames bounds the names one session's tool set is made of.
const maxToolsetNames = 4096

// settingsToolset is baseline.ToolsetHash of the tool set the settings
// configure: each tool a permission rule names ("Bash(npm test:*)" is
// Bash), as "allow:", "ask:" or "deny:" it; each MCP server of .mcp.json
// and the settings' enabled and disabled lists, as "mcp:NAME" or
// "mcp-off:NAME". "" when nothing is configured or readable. Files that
// cannot be read or parsed are left out: they are in the instructions hash
// already, and the hook must never fail a call for them.
func settingsToolset(cwd, home string) string {
	var names []string
	add := func(n string) {
		if n = strings.TrimSpace(n); n != "" && len(names) < maxToolsetNames && len(n) <= 256 {
			names = append(names, n)
		}
	}
	read := func(dir, rel string, v any) {
		if dir == "" || !filepath.IsAbs(dir) {
			return
		}
		f, err := os.Open(filepath.Join(dir, rel))
		if err != nil {
			return
		}
		defer f.Close()
		if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
			return
		}
		_ = json.NewDecoder(io.LimitReader(f, maxInstructionBytes)).Decode(v) // unreadable: left out (see above)
	}
	settings := func(dir string, files []string) {
		for _, rel := range files {
			var st struct {
				Permissions struct {
					Allow []string `json:"allow"`
					Ask   []string `json:"ask"`
					Deny  []string `json:"deny"`
				} `json:"permissions"`
				Enabled  []string `json:"enabledMcpjsonServers"`
				Disabled []string `json:"disabledMcpjsonServers"`
			}
			read(dir, rel, &st)
			for _, l := range []struct {
				prefix string
				rules  []string
			}{{"allow:", st.Permissions.Allow}, {"ask:", st.Permissions.Ask}, {"deny:", st.Permissions.Deny}} {
				for _, r := range l.rules {
					tool, _, _ := strings.Cut(r, "(")
					add(l.prefix + tool)
				}
			}
			for _, n := range st.Enabled {
				add("mcp:" + n)
			}
			for _, n := range st.Disabled {
				add("mcp-off:" + n)
			}
		}
	}
	settings(cwd, projectSettingsFiles)
	if home != cwd {
		settings(home, homeSettingsFiles)
	}
	var mcpFile struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	read(cwd, projectMCPFile, &mcpFile)
	servers := make([]string, 0, len(mcpFile.Servers))
	for n := range mcpFile.Servers {
		servers = append(servers, n)
	}
	slices.Sort(servers) // the cap on names must not depend on map order
	for _, n := range servers {
		add("mcp:" + n)
	}
	return baseline.ToolsetHash(names)
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
