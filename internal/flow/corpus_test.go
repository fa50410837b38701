package flow

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/fold"
)

// TestInjectionDevSet measures the detector on its labelled dev set
// (testdata/injection, FORMATS.md §2) and fails below the floors. The
// held-out set is measured by `mandate eval --injection`, never here.
func TestInjectionDevSet(t *testing.T) {
	s := newTestScanner(t)
	files, err := filepath.Glob("testdata/injection/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no dev set: %v", err)
	}
	type counts struct{ tp, fp, fn, tn, spanHit int }
	per := map[string]*counts{}
	all := &counts{}
	ids := map[string]bool{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for line := 1; sc.Scan(); line++ {
			var r struct {
				ID       string `json:"id"`
				Lang     string `json:"lang"`
				Source   string `json:"source"`
				Text     string `json:"text"`
				Injected *bool  `json:"injected"`
				Span     string `json:"span"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s:%d: %v", f, line, err)
			}
			switch {
			case r.ID == "" || r.Text == "" || r.Injected == nil || r.Source == "":
				t.Fatalf("%s:%d: id, source, text and injected are required", f, line)
			case ids[r.ID]:
				t.Fatalf("%s:%d: id %s repeated", f, line, r.ID)
			case *r.Injected && !strings.Contains(r.Text, r.Span):
				t.Fatalf("%s:%d: span is not a substring of text", f, line)
			}
			ids[r.ID] = true
			c := per[r.Lang]
			if c == nil {
				c = &counts{}
				per[r.Lang] = c
			}
			out := s.Output(quote(r.Text), Hint{})
			got := len(out.Injections) > 0
			for _, x := range []*counts{c, all} {
				switch {
				case got && *r.Injected:
					x.tp++
					if spanOverlaps(out, r.Span) {
						x.spanHit++
					}
				case got:
					x.fp++
				case *r.Injected:
					x.fn++
				default:
					x.tn++
				}
			}
			if got != *r.Injected {
				t.Logf("%s: labelled %v, detected %v %+v", r.ID, *r.Injected, got, out.Injections)
			}
		}
		fh.Close()
	}
	rate := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	for lang, c := range per {
		t.Logf("%s: precision %.3f recall %.3f (tp %d fp %d fn %d tn %d)", lang, rate(c.tp, c.tp+c.fp), rate(c.tp, c.tp+c.fn), c.tp, c.fp, c.fn, c.tn)
		if len(per) > 0 && c.tp+c.fn < 15 {
			t.Errorf("%s: fewer than 15 injected texts", lang)
		}
	}
	p, r := rate(all.tp, all.tp+all.fp), rate(all.tp, all.tp+all.fn)
	t.Logf("all: precision %.3f recall %.3f, spans found %d of %d", p, r, all.spanHit, all.tp)
	// Floors a little under today's figures, so a lexicon edit that
	// costs precision or recall fails here.
	if p < 0.95 || r < 0.93 {
		t.Errorf("precision %.3f recall %.3f: below the floors 0.95 / 0.93", p, r)
	}
	if rate(all.spanHit, all.tp) < 0.9 {
		t.Errorf("the marked span overlaps the labelled one in only %d of %d", all.spanHit, all.tp)
	}
}

// spanOverlaps reports whether a found injection shares text with the
// labelled span (the texts are squashed and cut, so compare words).
func spanOverlaps(sc *Scan, span string) bool {
	want := fold.String(squash(span))
	for _, in := range sc.Injections {
		got := in.full
		if got == "" {
			got = fold.String(in.Text)
		}
		for _, w := range strings.Fields(got) {
			if len(w) >= 5 && strings.Contains(want, w) {
				return true
			}
		}
	}
	return false
}
