package shell

import (
	"context"
	"fmt"
	"strings"

	"github.com/mandate-dev/mandate/internal/act"
)

// ctxCheckEvery is how many units of work pass between looks at the
// caller's context: often enough to stop within microseconds, rarely
// enough to cost nothing.
const ctxCheckEvery = 128

// Budget is the work one classification may still do, shared by every
// parser and walk of the call. It stops when the work is spent or the
// caller's context ends; stopped says why, once.
type Budget struct {
	ctx     context.Context
	work    int
	stopped string
}

// NewBudget is a call's budget; it stops when ctx ends.
func NewBudget(ctx context.Context) *Budget {
	if ctx == nil {
		ctx = context.Background()
	}
	return &Budget{ctx: ctx}
}

// Spent is the work taken so far.
func (bg *Budget) Spent() int { return bg.work }

// spend takes n units of shell work; it reports false once the budget is
// spent or the context has ended, and from then on.
func (bg *Budget) spend(n int) bool {
	if bg.stopped != "" {
		return false
	}
	before := bg.work
	bg.work += n
	if bg.work > act.MaxShellWork {
		bg.stopped = fmt.Sprintf("the command line is larger than the shell analysis examines (%d syntax nodes, MaxShellWork); the rest was not examined", act.MaxShellWork)
		return false
	}
	if before/ctxCheckEvery != bg.work/ctxCheckEvery || n >= ctxCheckEvery {
		if err := bg.ctx.Err(); err != nil {
			bg.stopped = "the analysis stopped when the caller's request ended (" + err.Error() + "); the rest was not examined"
			return false
		}
	}
	return true
}

// shellShape measures, without parsing src, how deeply it nests (…),
// $(…), `…`, ${…} and { }, and about how many syntax nodes the parser would
// build (its words and operators, here-document bodies included). It stops as soon as either
// passes its limit. Quotes are followed well enough not to count what is
// inside '…', or plain parentheses inside "…"; what it gets wrong only
// counts more, never less, than the parser would, so a line it refuses is
// one a person should look at anyway.
func shellShape(src string, maxDepth, maxTokens int) (depth, tokens int, over bool) {
	var stack []byte // 'p' paren, 'b' brace, '"' double quote, '`' backquote
	top := func() byte {
		if len(stack) == 0 {
			return 0
		}
		return stack[len(stack)-1]
	}
	push := func(c byte) bool {
		stack = append(stack, c)
		depth = max(depth, len(stack))
		return depth > maxDepth
	}
	inWord := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if tokens > maxTokens {
			return depth, tokens, true
		}
		if c == '\\' {
			i++
			continue
		}
		if top() == '"' {
			switch {
			case c == '"':
				stack = stack[:len(stack)-1]
			case c == '`':
				tokens++
				if push('`') {
					return depth, tokens, true
				}
			case c == '$':
				tokens++
				if i+1 < len(src) && (src[i+1] == '(' || src[i+1] == '{') {
					kind := byte('p')
					if src[i+1] == '{' {
						kind = 'b'
					}
					i++
					if push(kind) {
						return depth, tokens, true
					}
				}
			}
			continue
		}
		space := c == ' ' || c == '\t'
		if !space && !inWord {
			tokens++
		}
		inWord = !space && c != '\n' && !strings.ContainsRune(";&|<>()", rune(c))
		if strings.ContainsRune("$;&|<>(){}[]=+-*/%,!\n", rune(c)) {
			tokens++
		}
		switch c {
		case '\'':
			// Single quotes: nothing inside is special.
			for i++; i < len(src) && src[i] != '\''; i++ {
			}
		case '"':
			if push('"') {
				return depth, tokens, true
			}
		case '`':
			if top() == '`' {
				stack = stack[:len(stack)-1]
			} else if push('`') {
				return depth, tokens, true
			}
		case '(':
			if push('p') {
				return depth, tokens, true
			}
		case ')':
			if top() == 'p' {
				stack = stack[:len(stack)-1]
			}
		case '{':
			if push('b') {
				return depth, tokens, true
			}
		case '}':
			if top() == 'b' {
				stack = stack[:len(stack)-1]
			}
		}
	}
	return depth, tokens, tokens > maxTokens
}
