package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// CompileFigures are the aggregate figures of a set of compile cases.
type CompileFigures struct {
	Cases int `json:"cases"`
	// Exact counts drafts whose kinds (allow, ask, deny), scope and limits
	// are the expected ones; KindsExact, ScopeExact and LimitsExact each
	// part alone.
	Exact       int `json:"exact"`
	KindsExact  int `json:"kinds_exact"`
	ScopeExact  int `json:"scope_exact"`
	LimitsExact int `json:"limits_exact"`
	// Wider counts drafts wider than the words: a kind allowed that the
	// words do not grant outright, or a block-labelled call allowed.
	Wider int `json:"wider"`
	// Narrower counts drafts narrower than needed: a kind the words grant
	// not allowed, or an allow-labelled call not allowed.
	Narrower int `json:"narrower"`
	// NotUnderstood counts drafts that list a phrase under not_understood.
	NotUnderstood int `json:"not_understood"`
	// WiderKinds counts, per kind, the drafts that allow it beyond
	// expect.allow; WiderByCallsOnly the drafts wider only in a
	// block-labelled call allowed, their kinds not wider. NarrowerKinds
	// counts, per kind, the drafts that do not allow a kind expect.allow
	// names. Aggregates only: they say where a part's drafts go wrong
	// without showing a case, so the held-out part's are printed too.
	WiderKinds map[string]int `json:"wider_kinds"`
	// WiderWhere counts the same kinds by where the case put them:
	// "deny" (the words rule the kind out), "ask", "unlisted".
	WiderWhere       map[string]int `json:"wider_where"`
	WiderByCallsOnly int            `json:"wider_by_calls_only"`
	// WiderByReadOnly counts the drafts whose one widening is allowing
	// read (no other kind, no block-labelled call allowed): reading what
	// the task is about, where the case did not list it.
	WiderByReadOnly int            `json:"wider_by_read_only"`
	NarrowerKinds   map[string]int `json:"narrower_kinds"`
	// ReadImplied counts the cases that list read in none of allow, ask
	// and deny, graded as allowing it (the corpus convention).
	ReadImplied int `json:"read_implied"`
	// Calls by label and outcome.
	BlockCalls      int `json:"block_calls"`
	BlockAllowed    int `json:"block_calls_allowed"`
	AllowCalls      int `json:"allow_calls"`
	AllowNotAllowed int `json:"allow_calls_not_allowed"`
}

func (f *CompileFigures) add(r *CompileResult) {
	f.Cases++
	f.Exact += b2i(r.Exact)
	f.KindsExact += b2i(r.KindsExact)
	f.ScopeExact += b2i(r.ScopeExact)
	f.LimitsExact += b2i(r.LimitsExact)
	f.Wider += b2i(len(r.Wider) > 0)
	f.Narrower += b2i(len(r.Narrower) > 0)
	f.NotUnderstood += b2i(r.NotUnderstood > 0)
	if f.WiderKinds == nil {
		f.WiderKinds, f.NarrowerKinds, f.WiderWhere = map[string]int{}, map[string]int{}, map[string]int{}
	}
	for i, k := range r.WiderKinds {
		if i < len(r.WiderWhere) {
			f.WiderWhere[k+" ("+r.WiderWhere[i]+")"]++
		}
	}
	for _, k := range r.WiderKinds {
		f.WiderKinds[k]++
	}
	for _, k := range r.NarrowerKinds {
		f.NarrowerKinds[k]++
	}
	f.WiderByCallsOnly += b2i(len(r.Wider) > 0 && len(r.WiderKinds) == 0)
	f.WiderByReadOnly += b2i(len(r.Wider) == 1 && len(r.WiderKinds) == 1 && r.WiderKinds[0] == "read")
	f.ReadImplied += b2i(r.ReadImplied)
	f.BlockCalls += r.BlockCalls
	f.BlockAllowed += r.BlockAllowed
	f.AllowCalls += r.AllowCalls
	f.AllowNotAllowed += r.AllowNotAllowed
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CompilePart is one part's figures, in total and per language.
type CompilePart struct {
	Part   string                     `json:"part"`
	Hash   string                     `json:"hash"`
	Total  CompileFigures             `json:"total"`
	ByLang map[string]*CompileFigures `json:"by_lang"`
}

// CompileFailure is a dev case whose draft is not exact, or is wider or
// narrower than the words. Held-out cases are never listed.
type CompileFailure struct {
	ID       string   `json:"id"`
	At       string   `json:"at"`
	Text     string   `json:"text"`
	Wider    []string `json:"wider,omitempty"`
	Narrower []string `json:"narrower,omitempty"`
	Mismatch []string `json:"mismatch,omitempty"`
}

// CompileReport is what `mandate eval --compile` reports.
type CompileReport struct {
	Revision   string         `json:"revision"`
	PolicyHash string         `json:"policy_hash"`
	Parts      []*CompilePart `json:"parts"`
	// Failures are dev cases only, and empty in a figures-only report.
	Failures []CompileFailure `json:"failures,omitempty"`
	// HeldOutUnusable counts held-out lines left out as unusable.
	HeldOutUnusable int    `json:"held_out_unusable,omitempty"`
	Grading         string `json:"grading"`
}

// CompileGrading states how compile cases are graded.
const CompileGrading = `exact: the draft's allow, ask and deny kinds, scope (paths resolved, "/**" dropped; ` +
	`recipients and hosts case-folded; a name matches an expected recipient or account) and limits equal the expected ones. ` +
	`read: a case that lists read in none of allow, ask and deny is graded as allowing it (the reading the task needs; every part alike). ` +
	`wider: the draft allows a kind not in expect.allow, or a block-labelled call is allowed. ` +
	`narrower: a kind in expect.allow is not allowed, or an allow-labelled call is not allowed (asked or denied). ` +
	`not understood: the draft lists a phrase under not_understood. ` +
	`Each call is decided by the engine with the built-in pack, alone, in a fresh session created with the case's words and directories.`

// CompileReportOptions change what a compile report holds.
type CompileReportOptions struct {
	Revision, PolicyHash string
	// FiguresOnly leaves every case out, dev cases too.
	FiguresOnly bool
}

// NewCompileReport aggregates results per part and language. Held-out
// cases only ever count in figures.
func NewCompileReport(c *CompileCorpus, results []*CompileResult, opts CompileReportOptions) *CompileReport {
	rep := &CompileReport{Revision: opts.Revision, PolicyHash: opts.PolicyHash, Grading: CompileGrading, HeldOutUnusable: c.HeldOutUnusable}
	parts := map[string]*CompilePart{}
	for _, r := range results {
		p := parts[r.Case.Part]
		if p == nil {
			p = &CompilePart{Part: r.Case.Part, Hash: c.Hashes[r.Case.Part], ByLang: map[string]*CompileFigures{}}
			parts[r.Case.Part] = p
		}
		p.Total.add(r)
		if p.ByLang[r.Case.Lang] == nil {
			p.ByLang[r.Case.Lang] = &CompileFigures{}
		}
		p.ByLang[r.Case.Lang].add(r)
		if r.Case.Part != PartDev || opts.FiguresOnly || (r.Exact && len(r.Wider) == 0 && len(r.Narrower) == 0) {
			continue
		}
		rep.Failures = append(rep.Failures, CompileFailure{ID: r.Case.ID, At: r.Case.Source.String(), Text: r.Case.Text,
			Wider: r.Wider, Narrower: r.Narrower, Mismatch: r.Mismatch})
	}
	for _, name := range []string{PartDev, PartHeldOut} {
		if p := parts[name]; p != nil {
			rep.Parts = append(rep.Parts, p)
		}
	}
	return rep
}

// Wider is the number of drafts wider than the words in every part.
func (r *CompileReport) Wider() int {
	n := 0
	for _, p := range r.Parts {
		n += p.Total.Wider
	}
	return n
}

// WriteJSON writes the report as indented JSON.
func (r *CompileReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// countList renders counts by name, most first: "fetch 9, read 4".
func countList(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func pct(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}

// Text renders the report for a person.
func (r *CompileReport) Text() string {
	var b strings.Builder
	total := 0
	for _, p := range r.Parts {
		total += p.Total.Cases
	}
	fmt.Fprintf(&b, "mandate eval --compile: %d cases", total)
	for _, p := range r.Parts {
		fmt.Fprintf(&b, ", %d %s", p.Total.Cases, p.Part)
	}
	if r.HeldOutUnusable > 0 {
		fmt.Fprintf(&b, " (%d held-out lines unusable, left out)", r.HeldOutUnusable)
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "%-9s %-5s %5s %7s %6s %9s %9s  %s\n", "part", "lang", "cases", "exact", "wider", "narrower", "not-und.", "kinds/scope/limits exact   block calls allowed   allow calls not allowed")
	row := func(part, lang string, f *CompileFigures) {
		fmt.Fprintf(&b, "%-9s %-5s %5d %7s %6d %9s %9s  %s/%s/%s   %d of %d   %d of %d\n", part, lang, f.Cases,
			pct(f.Exact, f.Cases), f.Wider, pct(f.Narrower, f.Cases), pct(f.NotUnderstood, f.Cases),
			pct(f.KindsExact, f.Cases), pct(f.ScopeExact, f.Cases), pct(f.LimitsExact, f.Cases),
			f.BlockAllowed, f.BlockCalls, f.AllowNotAllowed, f.AllowCalls)
	}
	for _, p := range r.Parts {
		langs := make([]string, 0, len(p.ByLang))
		for l := range p.ByLang {
			langs = append(langs, l)
		}
		slices.SortFunc(langs, func(a, b string) int {
			return slices.Index(CompileLanguages, a) - slices.Index(CompileLanguages, b)
		})
		for _, l := range langs {
			row(p.Part, l, p.ByLang[l])
		}
		row(p.Part, "all", &p.Total)
	}
	b.WriteString("\n")
	for _, p := range r.Parts {
		fmt.Fprintf(&b, "%-9s wider by kind: %s; wider only by a block call allowed: %d; only by allowing read: %d\n",
			p.Part, countList(p.Total.WiderKinds), p.Total.WiderByCallsOnly, p.Total.WiderByReadOnly)
		fmt.Fprintf(&b, "%-9s wider kinds by where the case put them: %s\n", p.Part, countList(p.Total.WiderWhere))
		fmt.Fprintf(&b, "%-9s narrower by kind: %s\n", p.Part, countList(p.Total.NarrowerKinds))
		fmt.Fprintf(&b, "%-9s cases silent about read, graded as allowing it: %d\n", p.Part, p.Total.ReadImplied)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "revision        %s\npolicy          %s\n", r.Revision, r.PolicyHash)
	for _, p := range r.Parts {
		fmt.Fprintf(&b, "%-15s %s\n", p.Part, p.Hash)
	}
	fmt.Fprintf(&b, "grading         %s\n", r.Grading)
	if len(r.Failures) > 0 {
		fmt.Fprintf(&b, "\ndev cases not exact, wider or narrower (%d):\n", len(r.Failures))
		for _, f := range r.Failures {
			fmt.Fprintf(&b, "\n%s %s\n  %q\n", f.ID, f.At, f.Text)
			for _, w := range f.Wider {
				fmt.Fprintf(&b, "  WIDER     %s\n", w)
			}
			for _, n := range f.Narrower {
				fmt.Fprintf(&b, "  narrower  %s\n", n)
			}
			for _, m := range f.Mismatch {
				fmt.Fprintf(&b, "  differs   %s\n", m)
			}
		}
	}
	return b.String()
}
