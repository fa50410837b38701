package policy

import (
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// position is a 1-based line and column in a source file.
type position struct{ line, col int }

func nodePos(n *yaml.Node) position { return position{n.Line, n.Column} }

// scalarPos maps an offset (in runes) within a scalar node's decoded value
// back to its line and column in the source, so that an error CEL reports
// inside an expression points at the right character of the YAML file.
//
// It is exact for single-line and literal (|) scalars, which is how rules are
// normally written; for folded and multi-line plain or quoted scalars,
// where YAML rewrites line breaks and escapes, it is a close approximation.
//
// keyCol is the column of the scalar's mapping key: continuation lines of a
// multi-line plain or quoted scalar are indented past it.
func scalarPos(lines []string, keyCol int, n *yaml.Node, offset int) position {
	start := nodePos(n)
	if n.Line < 1 || n.Line > len(lines) || offset < 0 {
		return start
	}
	var segs []position // where each source line of the value starts
	var texts []string  // the value text on that line
	switch n.Style {
	case yaml.LiteralStyle, yaml.FoldedStyle:
		indent := -1
		for i := n.Line; i < len(lines); i++ { // lines[n.Line] is the line after the header
			l := lines[i]
			trimmed := strings.TrimLeft(l, " ")
			if trimmed == "" {
				segs = append(segs, position{i + 1, 1})
				texts = append(texts, "")
				continue
			}
			ind := len(l) - len(trimmed)
			if indent < 0 {
				indent = ind
			}
			if ind < indent {
				break // the block ended
			}
			segs = append(segs, position{i + 1, indent + 1})
			texts = append(texts, l[indent:])
		}
	default:
		first := lines[n.Line-1]
		col := n.Column
		if n.Style == yaml.DoubleQuotedStyle || n.Style == yaml.SingleQuotedStyle {
			col++
		}
		segs = append(segs, position{n.Line, col})
		texts = append(texts, runeSuffix(first, col-1))
		for i := n.Line; i < len(lines); i++ {
			l := lines[i]
			trimmed := strings.TrimLeft(l, " \t")
			if trimmed == "" || len(l)-len(trimmed) < keyCol {
				break
			}
			segs = append(segs, position{i + 1, len(l) - len(trimmed) + 1})
			texts = append(texts, trimmed)
		}
	}
	rest := offset
	for i, t := range texts {
		// The value joins source lines with one character (a newline or
		// a folding space), hence the +1 below.
		n := utf8.RuneCountInString(strings.TrimRight(t, " \t"))
		if rest <= n {
			return position{segs[i].line, segs[i].col + rest}
		}
		rest -= n + 1
	}
	return start
}

// runeSuffix returns s without its first n runes.
func runeSuffix(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[i:]
		}
		n--
	}
	return ""
}

// lineColOffset converts a 1-based line and 0-based column within text (as
// CEL reports them) into a rune offset into text.
func lineColOffset(text string, line, col int) int {
	if line < 1 || col < 0 {
		return 0 // no position: point at the start of the expression
	}
	off := 0
	for i, l := range strings.Split(text, "\n") {
		if i == line-1 {
			return off + col
		}
		off += utf8.RuneCountInString(l) + 1
	}
	return off
}

// splitLines splits source into lines without their line terminators.
func splitLines(src []byte) []string {
	s := strings.ReplaceAll(string(src), "\r\n", "\n")
	return strings.Split(s, "\n")
}
