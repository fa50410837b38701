package action

import (
	"context"
	"fmt"
	"strings"
)

// Limits on the work one call's classification may do. A hostile call must
// be decided quickly however it is shaped, and what a limit cuts off is not
// examined: it is recorded in Action.Unexamined, which the built-in policy
// turns into at least an ask (builtin.unexamined). docs/catalog.md lists
// them; TestLimitsAreDocumented keeps the list in step.
const (
	// MaxShellNesting bounds how deeply one command line nests
	// (…), $(…), `…`, ${…}, <(…) and { } groups. The parser's cost grows
	// with the square of the nesting, so a deeper line is not parsed.
	MaxShellNesting = 64
	// MaxShellTokens bounds the words and operators of one command line
	// (as shellShape counts them). Parsing costs one to two microseconds
	// a node, so a line with more is not parsed: at the limit parsing
	// takes 0.1–0.2 s. A 200 KB here-document of prose counts about 45,000.
	MaxShellTokens = 100_000
	// MaxShellWork bounds the syntax nodes the shell analysis visits for
	// one call, over every command line in it (nested sh -c strings too).
	MaxShellWork = 50_000
	// MaxShellCommands bounds the simple commands analysed per call.
	MaxShellCommands = 512
	// MaxShellDepth bounds nested interpreters (sh -c "sh -c …").
	MaxShellDepth = 8
	// MaxArgDepth and MaxArgNodes bound the walk through a call's
	// arguments (JSON objects and arrays).
	MaxArgDepth = 32
	MaxArgNodes = 20_000
	// MaxScanPerString and MaxScanTotal bound how much argument text is
	// scanned for secrets, addresses and links: per string and per call.
	MaxScanPerString = 1 << 20
	MaxScanTotal     = 4 << 20
	// MaxRecipients bounds the addresses taken from the text of one
	// argument string.
	MaxRecipients = 1024
	// MaxURLsPerString bounds the links taken from one argument string.
	MaxURLsPerString = 256
	// MaxSQLWords bounds the words of one SQL statement that are read.
	MaxSQLWords = 4096
	// MaxCodeMatches bounds the matches of one code pattern (a file
	// opened, a command run) taken from one snippet.
	MaxCodeMatches = 256
)

// ctxCheckEvery is how many units of work pass between looks at the
// caller's context: often enough to stop within microseconds, rarely
// enough to cost nothing.
const ctxCheckEvery = 128

// budget is the work one classification may still do, shared by every
// parser and walk of the call. It stops when the work is spent or the
// caller's context ends; stopped says why, once.
type budget struct {
	ctx     context.Context
	work    int
	stopped string
}

func newBudget(ctx context.Context) *budget {
	if ctx == nil {
		ctx = context.Background()
	}
	return &budget{ctx: ctx}
}

// spend takes n units of shell work; it reports false once the budget is
// spent or the context has ended, and from then on.
func (bg *budget) spend(n int) bool {
	if bg.stopped != "" {
		return false
	}
	before := bg.work
	bg.work += n
	if bg.work > MaxShellWork {
		bg.stopped = fmt.Sprintf("the command line is larger than the shell analysis examines (%d syntax nodes, MaxShellWork); the rest was not examined", MaxShellWork)
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
