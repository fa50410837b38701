package shell

import (
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// TestUnquote: literal parts lose their quoting as bash removes it, and the
// expansion reads nothing around it (no variable, no user's home).
func TestUnquote(t *testing.T) {
	t.Setenv("HOME", "/real/home")
	for _, tc := range []struct {
		part syntax.WordPart
		f    func(syntax.WordPart) string
		want string
	}{
		{&syntax.SglQuoted{Dollar: true, Value: `\x72m`}, single, "rm"},
		{&syntax.SglQuoted{Dollar: true, Value: `\u0072\155`}, single, "rm"},
		{&syntax.SglQuoted{Dollar: true, Value: `a\tb\q`}, single, "a\tb\\q"},
		{&syntax.SglQuoted{Dollar: true, Value: `cut\x00here`}, single, "cut"},
		{&syntax.SglQuoted{Dollar: true, Value: `100%s`}, single, "100%s"},
		{&syntax.SglQuoted{Value: `\x72m`}, single, `\x72m`},
		{&syntax.Lit{Value: `a\$b\"c\\d\e`}, double, `a$b"c\d\e`},
		{&syntax.Lit{Value: `~root/\$x`}, double, `~root/$x`},
		{&syntax.Lit{Value: `a\$b\"c`}, heredoc, `a$b\"c`},
	} {
		if got := tc.f(tc.part); got != tc.want {
			t.Errorf("%#v: %q, want %q", tc.part, got, tc.want)
		}
	}
	for s, want := range map[string]string{`\r\m`: "rm", `a\`: `a\`, `~/x`: `~/x`, `plain`: "plain"} {
		if got := unescapeBare(s); got != want {
			t.Errorf("unescapeBare(%q) = %q, want %q", s, got, want)
		}
	}
	if v := (literalEnv{}).Get("HOME alice"); v.String() != "~alice" {
		t.Errorf("~alice looked up as %q", v.String())
	}
	if v := (literalEnv{}).Get("PATH"); v.IsSet() {
		t.Errorf("PATH is set: %q", v.String())
	}
}

func single(p syntax.WordPart) string  { return unquoteSingle(p.(*syntax.SglQuoted)) }
func double(p syntax.WordPart) string  { return unquoteDouble(p.(*syntax.Lit)) }
func heredoc(p syntax.WordPart) string { return unquoteHeredoc(p.(*syntax.Lit)) }
