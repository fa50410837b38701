package flow

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/mandate-dev/mandate/internal/fold"
)

// How many items a call acts on, against how many the user's words said:
// "buy 2 packs" and add_to_cart with quantity 6, "book one room" and
// number_of_rooms 3, "delete the two drafts" and three messageIds. The
// argument names and the words each is compared with are data
// (values.yaml, `quantities`); the user's counts come from the mandate
// compiler (mandate.WordCounts) through Table.AddCounts.

// quantitySpec is one entry of `quantities` in values.yaml.
type quantitySpec struct {
	Keys    []string `yaml:"keys"`
	Lists   []string `yaml:"lists"`
	Objects []string `yaml:"objects"`
}

// quantityVocab is `quantities`, compiled: each argument name (normKey) to
// its entry, and each entry's object words, folded (nil: any count).
type quantityVocab struct {
	keys    map[string]int
	lists   map[string]int
	objects []map[string]bool
	// packUnits and packWords are pack_units and pack_words, folded.
	packUnits, packWords map[string]bool
}

func foldSet(ws []string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[fold.String(w)] = true
	}
	return m
}

// packSize is how many units an item's name says it holds ("… 12er
// Jahrespaket", "…, 36 pack", "4-pack"), 1 when it says none.
func (qv *quantityVocab) packSize(name string) int {
	toks := strings.FieldsFunc(fold.String(name), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, t := range toks {
		n, rest := leadingInt(t)
		switch {
		case n < 2 || n > 1000:
		case rest == "er": // "12er"
			return n
		case rest == "" && i+1 < len(toks) && qv.packUnits[toks[i+1]]:
			return n
		}
	}
	return 1
}

// leadingInt splits "12er" into 12 and "er"; 0 when s starts with no digit.
func leadingInt(s string) (int, string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' && i < 6 {
		i++
	}
	n, _ := strconv.Atoi(s[:i])
	return n, s[i:]
}

func compileQuantities(specs []quantitySpec) (quantityVocab, error) {
	qv := quantityVocab{keys: map[string]int{}, lists: map[string]int{}}
	for i, s := range specs {
		if len(s.Keys)+len(s.Lists) == 0 {
			return qv, fmt.Errorf("flow/values.yaml: quantities entry %d has no keys or lists", i+1)
		}
		for _, k := range s.Keys {
			qv.keys[normKey(k)] = i
		}
		for _, k := range s.Lists {
			qv.lists[normKey(k)] = i
		}
		var objs map[string]bool
		for _, o := range s.Objects {
			if objs == nil {
				objs = map[string]bool{}
			}
			objs[fold.String(o)] = true
		}
		qv.objects = append(qv.objects, objs)
	}
	return qv, nil
}

// argQuantity is how many items a call's arguments say, by entry of
// `quantities`: the largest number under its keys, or the sum of its
// lists' lengths.
type argQuantity struct {
	entry int
	field string
	n     int
	// objects are the entry's object words (nil: any count).
	objects map[string]bool
	// qv is the vocabulary it was read with, for the pack sizes of the
	// items the call names.
	qv *quantityVocab
}

// maxQuantityNodes bounds the argument nodes the quantity walk visits.
const maxQuantityNodes = 4096

// quantities reads a call's arguments for the counts `quantities` names.
func (v *vocabulary) quantities(args map[string]any) []argQuantity {
	if len(v.qty.keys)+len(v.qty.lists) == 0 {
		return nil
	}
	var out []argQuantity
	put := func(entry int, field string, n int, sum bool) {
		for i := range out {
			if out[i].entry == entry {
				if sum {
					out[i].n += n
					out[i].field += "+" + field
				} else if n > out[i].n {
					out[i].n, out[i].field = n, field
				}
				return
			}
		}
		out = append(out, argQuantity{entry: entry, field: field, n: n, objects: v.qty.objects[entry], qv: &v.qty})
	}
	nodes := 0
	var walk func(x any, depth int)
	walk = func(x any, depth int) {
		if nodes++; depth > 8 || nodes > maxQuantityNodes {
			return
		}
		switch x := x.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range x {
					if !yield(k) {
						return
					}
				}
			}) {
				c, nk := x[k], normKey(k)
				if e, ok := v.qty.lists[nk]; ok {
					if l, ok := c.([]any); ok && len(l) > 0 {
						put(e, k, len(l), true)
					}
				}
				if e, ok := v.qty.keys[nk]; ok {
					if n := countOf(c); n > 0 {
						put(e, k, n, false)
					}
				}
				walk(c, depth+1)
			}
		case []any:
			for _, c := range x {
				walk(c, depth+1)
			}
		}
	}
	walk(args, 0)
	return out
}

// countOf is a whole positive number an argument holds, 0 otherwise.
func countOf(x any) int {
	var f float64
	switch x := x.(type) {
	case float64:
		f = x
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case json.Number:
		f, _ = x.Float64()
	case string:
		f, _ = strconv.ParseFloat(x, 64)
	}
	if f < 1 || f > 1e6 || f != float64(int(f)) {
		return 0
	}
	return int(f)
}

// countsPacks reports whether a count of the user's words counts packs
// ("2 packs", "zwei Packungen"): then a quantity is held against the
// counts as it is, not times the units a pack holds.
func (t *Table) countsPacks(qv *quantityVocab) bool {
	return slices.ContainsFunc(t.counts, func(c UserCount) bool {
		return slices.ContainsFunc(c.Words, func(w string) bool { return qv.packWords[w] })
	})
}

// UserCount is a count the user's words state (mandate.WordCount): the
// number and the folded words after it.
type UserCount struct {
	N      int      `json:"n"`
	Words  []string `json:"words"`
	Phrase string   `json:"phrase"`
}

// maxUserCounts bounds the counts a table keeps.
const maxUserCounts = 64

// AddCounts records the counts of the user's words (never evicted).
func (t *Table) AddCounts(cs []UserCount) {
	for _, c := range cs {
		if len(t.counts) >= maxUserCounts {
			return
		}
		if c.Words == nil {
			c.Words = []string{}
		}
		if !slices.ContainsFunc(t.counts, func(o UserCount) bool { return o.N == c.N && o.Phrase == c.Phrase }) {
			t.counts = append(t.counts, c)
		}
	}
}

// QuantityFacts is how many items a call acts on by one of its arguments,
// with the count the user's words state for it.
type QuantityFacts struct {
	// Field is the argument (quantity, number_of_rooms, messageIds, to;
	// lists counted together are joined by "+": "cc+to").
	Field string `json:"field"`
	// N is its number, or its list's length (with the lists counted
	// together: to, cc and bcc).
	N int `json:"n"`
	// Stated is the count the user's words give for what the argument
	// counts — the largest of those whose words name its objects (room,
	// drafts, people), or of all counts for an argument of any item — 0
	// when they give none. Phrase is that count as written.
	Stated int    `json:"stated"`
	Phrase string `json:"phrase"`
	// Per is how many units each item holds when the count of an
	// argument of any item is of units and the item the call names is a
	// pack ("one more of those filter cartridges", and a quantity of 1 of
	// "… 12er Jahrespaket": N is 12, Per 12); 1 otherwise.
	Per int `json:"per"`
}

// quantityFacts compares the call's quantities with the user's counts.
func (t *Table) quantityFacts(f *Facts, sc *Scan) {
	if len(t.counts) > 0 {
		f.UserCounts = t.counts
	} else {
		f.UserCounts = []UserCount{}
	}
	if sc == nil {
		return
	}
	for _, q := range sc.quantities {
		qf := QuantityFacts{Field: q.field, N: q.n, Per: 1}
		objs := q.objects
		var stated *UserCount
		for i, c := range t.counts {
			if c.N > qf.Stated && (objs == nil || slices.ContainsFunc(c.Words, func(w string) bool { return objs[w] })) {
				qf.Stated, qf.Phrase, stated = c.N, c.Phrase, &t.counts[i]
			}
		}
		if objs == nil && stated != nil && !t.countsPacks(q.qv) {
			// The words count units; the item the call names may hold many.
			for _, it := range f.Items {
				qf.Per = max(qf.Per, q.qv.packSize(it.Name))
			}
			qf.N *= qf.Per
		}
		f.Quantity = max(f.Quantity, qf.N)
		f.Quantities = append(f.Quantities, qf)
	}
}
