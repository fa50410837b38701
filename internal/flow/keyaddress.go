package flow

import (
	"strings"
	"unicode"
)

// maxKeyLen bounds the JSON keys read as words: a machine-named key is a
// short label ("note_for_ai", "assistantInstructions"), not prose.
const maxKeyLen = 64

// keyWords spells a JSON key as the words it is made of: snake_case,
// kebab-case, dotted and camelCase keys split at their joints ("note_for_ai"
// and "noteForAI" are "note for ai").
func keyWords(key string) string {
	if len(key) > maxKeyLen {
		return ""
	}
	var b strings.Builder
	prev := rune(0)
	for _, r := range key {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(prev) && b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(unicode.ToLower(r))
		default:
			if b.Len() > 0 && prev != ' ' {
				b.WriteByte(' ')
			}
			r = ' '
		}
		prev = r
	}
	return strings.TrimSpace(b.String())
}

// keyAddress returns the label a JSON key makes of its value when the key
// itself addresses the model ("note_for_ai", "assistant_instructions",
// "hinweis_fuer_ki"): its words and a colon, to be read before the value,
// as "Note for AI: …" would be in prose. A walk of the JSON sees the value
// alone, which then often names no reader at all. Other keys give "": a
// key such as "user" or "description" says nothing about who the value is
// for, and a fake chat turn or tag in a key is not read as one.
func (d *Detector) keyAddress(key string, sc *detectScratch) string {
	w := keyWords(key)
	if w == "" {
		return ""
	}
	label := w + ": "
	sc.sents = sentences(label, sc.sents)
	if len(sc.sents) != 1 {
		return ""
	}
	var f sentFlags
	d.sentenceFlags(label, sc.sents[0], &f, sc)
	if f.any(catAddressee, catAuthority) {
		return label
	}
	return ""
}

// detectKeyed detects the spans of a JSON string value s under a key that
// addresses the model (keyAddress's label), as if the label were written
// before it; the spans are given in s's offsets.
func (d *Detector) detectKeyed(label, s string, sc *detectScratch) []Span {
	spans := d.detect(label+s, "", sc)
	n := len(label)
	out := spans[:0]
	for _, sp := range spans {
		if sp.End <= n {
			continue
		}
		sp.Start, sp.End, sp.Tail = max(0, sp.Start-n), sp.End-n, max(0, sp.Tail-n)
		out = append(out, sp)
	}
	return out
}

// maxKeyLabels bounds the keys one scan remembers the label of.
const maxKeyLabels = 256

// keyLabel is keyAddress for the key of the string being scanned,
// remembered per key: a listing repeats its keys in every item.
func (st *scanState) keyLabel(key string) string {
	if key == "" || st.mode != modeOutput {
		return ""
	}
	if l, ok := st.keyLabels[key]; ok {
		return l
	}
	l := st.s.det.keyAddress(key, &detectScratch{})
	if st.keyLabels == nil {
		st.keyLabels = map[string]string{}
	}
	if len(st.keyLabels) < maxKeyLabels {
		st.keyLabels[key] = l
	}
	return l
}
