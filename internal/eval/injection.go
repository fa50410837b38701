package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/mandate-dev/mandate/internal/flow"
)

// An injection set is labelled tool outputs, one a line:
// {"id", "lang", "source", "text", "injected": bool, "span"?} — span, for
// an injected text, is the part a person marked as addressed to the model.
// It measures the injection detector alone (internal/flow), outside any
// session. A file under a directory whose name contains "heldout" is the
// held-out part: counted, never listed.

// InjectionCase is one labelled output.
type InjectionCase struct {
	ID       string `json:"id"`
	Lang     string `json:"lang"`
	Source   string `json:"source"`
	Text     string `json:"text"`
	Injected *bool  `json:"injected"`
	Span     string `json:"span,omitempty"`
	Note     string `json:"note,omitempty"`
}

// DetectorFigures are a detector's counts and rates on a set.
type DetectorFigures struct {
	Texts          int     `json:"texts"`
	TruePositives  int     `json:"true_positives"`
	FalsePositives int     `json:"false_positives"`
	FalseNegatives int     `json:"false_negatives"`
	TrueNegatives  int     `json:"true_negatives"`
	Precision      float64 `json:"precision"`
	Recall         float64 `json:"recall"`
	// SpansFound counts the true positives whose marked span shares words
	// with the labelled one.
	SpansFound int `json:"spans_found"`
}

// InjectionReport is the detector graded per part and language.
type InjectionReport struct {
	Files []string                               `json:"files"`
	Parts map[string]*DetectorFigures            `json:"parts"`
	Langs map[string]map[string]*DetectorFigures `json:"languages"` // part → lang → figures
	// Misses are the dev cases graded wrong (held-out ones never).
	Misses []string `json:"misses"`
}

// LoadInjection reads injection sets; a directory means its *.jsonl files.
func LoadInjection(paths []string) ([]InjectionCase, []string, error) {
	files, contents, err := readAll(paths, "injection set")
	if err != nil {
		return nil, nil, err
	}
	var out []InjectionCase
	for i, f := range files {
		held := partOf(f) == PartHeldOut
		for n, line := range lines(contents[i]) {
			var c InjectionCase
			if err := json.Unmarshal(line, &c); err != nil || c.ID == "" || c.Text == "" || c.Injected == nil {
				if held {
					return nil, nil, fmt.Errorf("%s:%d: a held-out line is unusable (details withheld)", f, n)
				}
				return nil, nil, fmt.Errorf("%s:%d: want id, text and injected (%v)", f, n, err)
			}
			c.Source = f
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("no injection cases in %s", strings.Join(files, ", "))
	}
	return out, files, nil
}

// GradeInjection runs the detector over every case.
func GradeInjection(s *flow.Scanner, cases []InjectionCase, files []string) *InjectionReport {
	r := &InjectionReport{Files: files, Parts: map[string]*DetectorFigures{}, Langs: map[string]map[string]*DetectorFigures{}, Misses: []string{}}
	for _, c := range cases {
		part := partOf(c.Source)
		if r.Langs[part] == nil {
			r.Langs[part] = map[string]*DetectorFigures{}
		}
		lang := c.Lang
		if lang == "" {
			lang = "?"
		}
		b, _ := json.Marshal(c.Text)
		sc := s.Output(b, flow.Hint{})
		for _, f := range []*DetectorFigures{get(r.Parts, part), get(r.Langs[part], lang)} {
			f.add(sc, c)
		}
		got := len(sc.Injections) > 0
		if got != *c.Injected && part == PartDev {
			r.Misses = append(r.Misses, fmt.Sprintf("%s (labelled %v, detected %v)", c.ID, *c.Injected, got))
		}
	}
	for _, f := range r.Parts {
		f.finish()
	}
	for _, m := range r.Langs {
		for _, f := range m {
			f.finish()
		}
	}
	return r
}

func get(m map[string]*DetectorFigures, k string) *DetectorFigures {
	if m[k] == nil {
		m[k] = &DetectorFigures{}
	}
	return m[k]
}

func (f *DetectorFigures) add(sc *flow.Scan, c InjectionCase) {
	got := len(sc.Injections) > 0
	f.Texts++
	switch {
	case got && *c.Injected:
		f.TruePositives++
		if spanShared(sc, c.Span) {
			f.SpansFound++
		}
	case got:
		f.FalsePositives++
	case *c.Injected:
		f.FalseNegatives++
	default:
		f.TrueNegatives++
	}
}

func (f *DetectorFigures) finish() {
	f.Precision = rate(f.TruePositives, f.TruePositives+f.FalsePositives)
	f.Recall = rate(f.TruePositives, f.TruePositives+f.FalseNegatives)
}

// spanShared: a marked span shares a word of five letters or more with
// the labelled span (spans are squashed and cut, so words are compared).
func spanShared(sc *flow.Scan, span string) bool {
	want := strings.ToLower(span)
	for _, in := range sc.Injections {
		for _, w := range strings.Fields(strings.ToLower(in.Text)) {
			if len(w) >= 5 && strings.Contains(want, strings.Trim(w, ".,;:!?\"'()")) {
				return true
			}
		}
	}
	return false
}

// WriteText prints the figures, and the dev misses unless figuresOnly.
func (r *InjectionReport) WriteText(w io.Writer, figuresOnly bool) {
	fmt.Fprintf(w, "mandate eval --injection: %d files\n\n", len(r.Files))
	fmt.Fprintf(w, "%-10s %-5s %6s %5s %5s %5s %5s %10s %8s %7s\n", "part", "lang", "texts", "tp", "fp", "fn", "tn", "precision", "recall", "spans")
	for _, part := range slices.Sorted(maps.Keys(r.Parts)) {
		row := func(lang string, f *DetectorFigures) {
			fmt.Fprintf(w, "%-10s %-5s %6d %5d %5d %5d %5d %9.1f%% %7.1f%% %7d\n", part, lang, f.Texts, f.TruePositives, f.FalsePositives,
				f.FalseNegatives, f.TrueNegatives, 100*f.Precision, 100*f.Recall, f.SpansFound)
		}
		for _, lang := range slices.Sorted(maps.Keys(r.Langs[part])) {
			row(lang, r.Langs[part][lang])
		}
		row("all", r.Parts[part])
	}
	if figuresOnly || len(r.Misses) == 0 {
		return
	}
	fmt.Fprintf(w, "\ndev cases graded wrong (%d)\n", len(r.Misses))
	for _, m := range r.Misses {
		fmt.Fprintf(w, "  %s\n", m)
	}
}
