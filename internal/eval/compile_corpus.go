package eval

// The compile corpus (FORMATS.md §3): one user instruction a line, with the
// grant a careful reader draws from exactly those words and a few calls
// that must, or must not, be allowed under it. `mandate eval --compile`
// drafts each instruction the way a live session does and grades the draft
// and the calls' decisions against it.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/action"
)

// CompileLanguages are the languages a compile case may be in.
var CompileLanguages = []string{"en", "de", "fr", "es", "it"}

// CompileCase is one instruction with the grant it should compile to.
type CompileCase struct {
	ID      string
	Lang    string
	Text    string
	WorkDir string
	HomeDir string
	Expect  CompileExpect
	Calls   []CompileCall
	Source  Position
	// Part is PartDev or PartHeldOut, from the file's path.
	Part string
}

// CompileExpect is the grant the words support.
type CompileExpect struct {
	Allow, Ask, Deny []action.Kind
	Paths            []string
	Recipients       []string
	Hosts            []string
	Accounts         []string
	Spend            *CompileMoney
	Counts           map[action.Kind]int
}

// CompileMoney is an expected spend cap.
type CompileMoney struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// CompileCall is a call that must (label allow) or must not (label block)
// be allowed under the instruction.
type CompileCall struct {
	Tool  string
	Args  map[string]any
	Block bool
}

// CompileCorpus is a set of compile-case files, decoded.
type CompileCorpus struct {
	Files []string
	// Hashes are "sha256:…" of each part's files, concatenated in order.
	Hashes map[string]string
	Cases  []*CompileCase
	// HeldOutUnusable counts held-out lines that could not be used. They
	// are left out, and nothing of them is shown: not even the reason,
	// which would quote the line.
	HeldOutUnusable int
}

type (
	wireCompileCase struct {
		ID      *string `json:"id"`
		Lang    *string `json:"lang"`
		Text    *string `json:"text"`
		Context *struct {
			WorkingDirectory string `json:"working_directory"`
			HomeDirectory    string `json:"home_directory"`
		} `json:"context"`
		Expect *struct {
			Allow []string `json:"allow"`
			Ask   []string `json:"ask"`
			Deny  []string `json:"deny"`
			Scope *struct {
				Paths      []string `json:"paths"`
				Recipients []string `json:"recipients"`
				Hosts      []string `json:"hosts"`
				Accounts   []string `json:"accounts"`
			} `json:"scope"`
			Limits *struct {
				Spend  *CompileMoney  `json:"spend"`
				Counts map[string]int `json:"counts"`
			} `json:"limits"`
		} `json:"expect"`
		Calls []struct {
			Tool  *string         `json:"tool"`
			Args  json.RawMessage `json:"args"`
			Label *string         `json:"label"`
		} `json:"calls"`
	}
)

// LoadCompile reads compile-case files (a directory contributes its
// *.jsonl files). Every unusable line is reported with its file and line;
// any such dev line fails the load: a corpus graded with lines left out
// would report figures for another corpus. Held-out lines that cannot be
// used are only counted (HeldOutUnusable), so that nothing of them reaches
// the compiler's authors.
func LoadCompile(paths []string) (*CompileCorpus, error) {
	if len(paths) == 0 {
		return nil, errors.New("no compile-case files or directories given")
	}
	files, contents, err := readAll(paths, "compile cases")
	if err != nil {
		return nil, err
	}
	c := &CompileCorpus{Files: files, Hashes: map[string]string{}}
	hashes := map[string]io.Writer{}
	sums := map[string]func() []byte{}
	seen := map[string]Position{}
	var bad []*LineError
	for i, f := range files {
		data := contents[i]
		part := partOf(f)
		if hashes[part] == nil {
			h := sha256.New()
			hashes[part], sums[part] = h, func() []byte { return h.Sum(nil) }
		}
		hashes[part].Write(data)
		for n, line := range lines(data) {
			pos := Position{File: f, Line: n}
			cc, err := DecodeCompileCase(line)
			if err == nil {
				err = alreadyUsed(seen, cc.ID)
			}
			if err != nil && part == PartHeldOut {
				c.HeldOutUnusable++
				continue
			}
			if err != nil {
				bad = append(bad, &LineError{Position: pos, Err: err})
				continue
			}
			cc.Source, cc.Part = pos, part
			seen[cc.ID] = pos
			c.Cases = append(c.Cases, cc)
		}
	}
	for part, sum := range sums {
		c.Hashes[part] = "sha256:" + hex.EncodeToString(sum())
	}
	if len(bad) > 0 {
		return nil, &BadLinesError{Lines: bad}
	}
	if len(c.Cases) == 0 {
		return nil, fmt.Errorf("no compile cases in %s", strings.Join(files, ", "))
	}
	return c, nil
}

// DecodeCompileCase parses one compile-case line and checks it is usable.
// Unknown fields are ignored (meta, why, notes are the grader's).
func DecodeCompileCase(line []byte) (*CompileCase, error) {
	var w wireCompileCase
	if err := decodeLine(line, &w, "case"); err != nil {
		return nil, err
	}
	switch {
	case w.ID == nil || strings.TrimSpace(*w.ID) == "":
		return nil, errors.New("id is required")
	case w.Lang == nil || !slices.Contains(CompileLanguages, *w.Lang):
		return nil, fmt.Errorf("lang: want one of %s", strings.Join(CompileLanguages, ", "))
	case w.Text == nil || strings.TrimSpace(*w.Text) == "":
		return nil, errors.New("text is required")
	case w.Expect == nil:
		return nil, errors.New("expect is required")
	case len(w.Calls) == 0:
		return nil, errors.New("calls: at least one call is required")
	}
	cc := &CompileCase{ID: *w.ID, Lang: *w.Lang, Text: *w.Text}
	if w.Context != nil {
		cc.WorkDir, cc.HomeDir = w.Context.WorkingDirectory, w.Context.HomeDirectory
	}
	var err error
	kinds := func(field string, list []string) []action.Kind {
		out := make([]action.Kind, 0, len(list))
		for i, s := range list {
			k := action.Kind(s)
			if !k.Valid() || k == action.Unknown {
				err = errors.Join(err, fmt.Errorf("expect.%s[%d]: unknown kind %q", field, i, s))
				continue
			}
			out = append(out, k)
		}
		return out
	}
	e := w.Expect
	cc.Expect.Allow, cc.Expect.Ask, cc.Expect.Deny = kinds("allow", e.Allow), kinds("ask", e.Ask), kinds("deny", e.Deny)
	for _, k := range cc.Expect.Allow {
		if slices.Contains(cc.Expect.Ask, k) || slices.Contains(cc.Expect.Deny, k) {
			err = errors.Join(err, fmt.Errorf("expect: %s is in allow and in ask or deny", k))
		}
	}
	if e.Scope != nil {
		cc.Expect.Paths, cc.Expect.Recipients = e.Scope.Paths, e.Scope.Recipients
		cc.Expect.Hosts, cc.Expect.Accounts = e.Scope.Hosts, e.Scope.Accounts
	}
	if e.Limits != nil {
		if sp := e.Limits.Spend; sp != nil {
			if sp.Amount <= 0 || len(sp.Currency) != 3 || strings.ToUpper(sp.Currency) != sp.Currency {
				err = errors.Join(err, fmt.Errorf("expect.limits.spend: want a positive amount and an ISO 4217 currency, got %v %q", sp.Amount, sp.Currency))
			}
			cc.Expect.Spend = sp
		}
		for k, n := range e.Limits.Counts {
			kind := action.Kind(k)
			if !kind.Valid() || kind == action.Unknown || n < 0 {
				err = errors.Join(err, fmt.Errorf("expect.limits.counts: %q: %d is not a count of a kind", k, n))
				continue
			}
			if cc.Expect.Counts == nil {
				cc.Expect.Counts = map[action.Kind]int{}
			}
			cc.Expect.Counts[kind] = n
		}
	}
	for i, call := range w.Calls {
		switch {
		case call.Tool == nil || strings.TrimSpace(*call.Tool) == "":
			err = errors.Join(err, fmt.Errorf("calls[%d].tool is required", i))
			continue
		case call.Label == nil || (*call.Label != "allow" && *call.Label != "block"):
			err = errors.Join(err, fmt.Errorf("calls[%d].label: want \"allow\" or \"block\"", i))
			continue
		}
		args := map[string]any{}
		if len(call.Args) > 0 && string(call.Args) != "null" {
			if jerr := json.Unmarshal(call.Args, &args); jerr != nil {
				err = errors.Join(err, fmt.Errorf("calls[%d].args: want an object: %v", i, jerr))
				continue
			}
		}
		cc.Calls = append(cc.Calls, CompileCall{Tool: *call.Tool, Args: args, Block: *call.Label == "block"})
	}
	if err != nil {
		return nil, err
	}
	return cc, nil
}
