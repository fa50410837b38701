package shell

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Quote removal of literal word parts, as the shell does it, by
// mvdan.cc/sh/v3/expand. Only literal parts are given to it, under a
// Config that runs nothing and reads nothing: no command or process
// substitution (they stay nil, an error if ever reached), no globbing
// (ReadDir2 nil) and an environment that knows no variable. Parameter
// expansions are not handed over at all: the walker keeps them as their
// source form, not examined.

// literalEnv is the environment quote removal sees: no variable is set.
// The tilde lookups expand makes for a leading ~ or ~user answer the
// tilde itself, so a word keeps its tilde as written and no user
// database is read.
type literalEnv struct{}

func (literalEnv) Get(name string) expand.Variable {
	if name == "HOME" || strings.HasPrefix(name, "HOME ") {
		return expand.Variable{Set: true, Kind: expand.String, Str: "~" + strings.TrimPrefix(strings.TrimPrefix(name, "HOME"), " ")}
	}
	return expand.Variable{}
}

func (literalEnv) Each(func(string, expand.Variable) bool) {}

// literalConfig is a fresh Config for one expansion (expand keeps state in
// it, so it is not shared).
func literalConfig() *expand.Config {
	return &expand.Config{Env: literalEnv{}}
}

// expandLiteral is the value of a word made of the given literal parts
// only, or raw when expand refuses it.
func expandLiteral(doc bool, raw string, parts ...syntax.WordPart) string {
	wd := &syntax.Word{Parts: parts}
	var s string
	var err error
	if doc {
		s, err = expand.Document(literalConfig(), wd)
	} else {
		s, err = expand.Literal(literalConfig(), wd)
	}
	if err != nil {
		return raw
	}
	return s
}

// unquoteDouble is a literal inside double quotes after quote removal:
// \$ \` \" \\ lose their backslash, any other backslash stays.
func unquoteDouble(x *syntax.Lit) string {
	if !strings.Contains(x.Value, `\`) {
		return x.Value
	}
	return expandLiteral(false, x.Value, &syntax.DblQuoted{Parts: []syntax.WordPart{x}})
}

// unquoteHeredoc is a literal of an expanded here-document body: \$ \`
// \\ lose their backslash, any other backslash (\" too) stays.
func unquoteHeredoc(x *syntax.Lit) string {
	if !strings.Contains(x.Value, `\`) {
		return x.Value
	}
	return expandLiteral(true, x.Value, x)
}

// unquoteSingle is a single-quoted string's value; a $'…' string has its
// escapes decoded as bash does (\n, \xHH, \NNN, \uHHHH; an unknown escape
// keeps its backslash; the value ends at a NUL byte).
func unquoteSingle(x *syntax.SglQuoted) string {
	if !x.Dollar || !strings.Contains(x.Value, `\`) {
		return x.Value
	}
	return expandLiteral(false, x.Value, x)
}

// unescapeBare removes backslash quoting from an unquoted literal: "\r" is
// "r", a trailing backslash stays. (expand.Fields does the same but also
// expands braces, which the analysis keeps as written and marks as a
// pattern.) A backslash-newline never reaches here: the parser drops it.
func unescapeBare(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
