package eval

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Stats are a corpus's counts, with no engine involved: what
// scenarios/README.md tabulates.
type Stats struct {
	Count
	Files      []string          `json:"files"`
	Hash       string            `json:"scenarios_hash"`
	Areas      map[string]*Count `json:"areas"`
	Categories map[string]*Count `json:"categories"`
}

// Stats counts episodes, calls and labels overall, per area and per
// category.
func (c *Corpus) Stats() *Stats {
	s := &Stats{Files: c.Files, Hash: c.Hash, Areas: map[string]*Count{}, Categories: map[string]*Count{}}
	for _, ep := range c.Episodes {
		s.add(ep)
		for _, m := range []struct {
			counts map[string]*Count
			key    string
		}{{s.Areas, ep.Area()}, {s.Categories, ep.Category}} {
			cnt, ok := m.counts[m.key]
			if !ok {
				cnt = &Count{}
				m.counts[m.key] = cnt
			}
			cnt.add(ep)
		}
	}
	return s
}

// WriteMarkdown writes the counts as Markdown tables: one row per area
// with its benign and harmful episodes, then one per category.
func (s *Stats) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	row := func(name string, c *Count) {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d |\n", name, c.Episodes, c.Calls, c.Scored, c.AllowLabelled, c.BlockLabelled, c.Unscored)
	}
	head := func(first string) {
		fmt.Fprintf(&b, "| %s | episodes | calls | scored | allow | block | null |\n", first)
		b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	}
	head("area")
	for _, k := range slices.Sorted(maps.Keys(s.Areas)) {
		row(k, s.Areas[k])
	}
	row("**total**", &s.Count)
	b.WriteString("\n")
	head("category")
	for _, k := range slices.Sorted(maps.Keys(s.Categories)) {
		row(k, s.Categories[k])
	}
	fmt.Fprintf(&b, "\nscenarios %s (%d files)\n", s.Hash, len(s.Files))
	_, err := io.WriteString(w, b.String())
	return err
}
