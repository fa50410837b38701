package ui

import "strings"

// diffLine is one line of a mandate diff: Op is "+" (added), "-" (removed)
// or " " (kept, shown for context).
type diffLine struct {
	Op, Text string
}

// maxDiffLines bounds the diff's table (rows × columns): versions longer
// than this are shown whole, without a diff.
const maxDiffLines = 1500

// diffLines is a line diff of a and b by longest common subsequence,
// keeping at most two unchanged lines of context around each change.
func diffLines(a, b string) []diffLine {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(x) > maxDiffLines || len(y) > maxDiffLines {
		return []diffLine{{Op: " ", Text: "(too long to compare line by line: read both versions)"}}
	}
	// lcs[i][j] is the LCS length of x[i:] and y[j:].
	lcs := make([][]int32, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var all []diffLine
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			all = append(all, diffLine{" ", x[i]})
			i, j = i+1, j+1
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			all = append(all, diffLine{"+", y[j]})
			j++
		default:
			all = append(all, diffLine{"-", x[i]})
			i++
		}
	}
	// Keep changes and two lines of context around them.
	keep := make([]bool, len(all))
	for k, l := range all {
		if l.Op != " " {
			for c := max(0, k-2); c <= min(len(all)-1, k+2); c++ {
				keep[c] = true
			}
		}
	}
	var out []diffLine
	for k, l := range all {
		if keep[k] {
			out = append(out, l)
		} else if k > 0 && keep[k-1] {
			out = append(out, diffLine{" ", "…"})
		}
	}
	return out
}

// Class is the line's CSS class.
func (l diffLine) Class() string {
	switch l.Op {
	case "+":
		return "add"
	case "-":
		return "del"
	}
	return "ctx"
}
