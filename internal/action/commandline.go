package action

import (
	"context"
	"net/url"
	"sync"

	"github.com/mandate-dev/mandate/internal/act"
	"github.com/mandate-dev/mandate/internal/secret"
	"github.com/mandate-dev/mandate/internal/shell"
)

// Shell command lines and inline code are analysed by package shell; this
// file is where the classifier asks for that analysis and adds it to the
// action.

// ParseShell parses a shell command line and returns every simple command in
// it (after unwrapping sudo, env, xargs, sh -c and the like; Command.Via says
// what each was found inside), the file paths the line touches (normalised
// against workDir and homeDir as Call describes), and the URLs it names.
//
// On a syntax error (in both the Bash and the POSIX dialect) it returns the
// error together with a single Execute command standing for the whole line,
// so a caller that ignores the error still never sees a read.
//
// It uses the built-in knowledge only; Classifier.ParseShell uses the
// classifier's, operator files included.
func ParseShell(script, workDir, homeDir string) ([]Command, []PathRef, []string, error) {
	k, err := builtinKnowledge()
	if err != nil {
		return nil, nil, nil, err
	}
	r := k.analyzeShell(shell.NewBudget(context.Background()), script, workDir, homeDir, nil)
	return r.Commands, r.Paths, r.URLs, r.Err
}

// ParseShell is the package's ParseShell with the classifier's knowledge.
func (c *Classifier) ParseShell(script, workDir, homeDir string) ([]Command, []PathRef, []string, error) {
	r := c.k.analyzeShell(shell.NewBudget(context.Background()), script, workDir, homeDir, c.parsers)
	return r.Commands, r.Paths, r.URLs, r.Err
}

// analyzeShell is the seam between the classifier and the shell analysis
// (package shell): it asks for a command line's analysis within the call's
// budget. parsers, if not nil, recycles Bash parsers (they are large and
// not safe to share at once).
func (k *knowledge) analyzeShell(bg *shell.Budget, script, workDir, homeDir string, parsers *sync.Pool) *shell.Result {
	return k.shell.Analyze(bg, script, workDir, homeDir, parsers)
}

// applyShell adds a command line's analysis to the action.
func applyShell(b *builder, r *shell.Result) {
	for _, c := range r.Commands {
		b.command(c)
	}
	for _, p := range r.Paths {
		b.path(p)
	}
	for _, u := range r.URLs {
		b.url(u)
	}
	for _, h := range r.Hosts {
		b.host(h)
	}
	for _, rc := range r.Recipients {
		b.recipient(rc.Address, rc.Field, rc.Name)
	}
	b.found(r.Kinds, r.Destructive, r.External, r.Sensitive, r.Notes, r.Unexamined)
	b.public = b.public || r.Public
	b.adminGrant = b.adminGrant || r.AdminGrant
}

// found adds what an analysis (of a command line, of inline code) found:
// its kinds, flags, notes and what it did not examine.
func (b *builder) found(kinds act.Set, destructive, external, sensitive bool, notes, unexamined []string) {
	b.kinds |= kinds
	b.destructive = b.destructive || destructive
	b.external = b.external || external
	b.a.Sensitive = b.a.Sensitive || sensitive
	for _, n := range notes {
		b.note(n)
	}
	for _, u := range unexamined {
		b.unexamined(u)
	}
}

// applyCode adds inline code found in a tool argument to the action.
func (k *knowledge) applyCode(bg *shell.Budget, b *builder, r shell.CodeResult, dir, home string, parsers *sync.Pool) {
	b.found(r.Kinds, r.Destructive, r.External, r.Sensitive, r.Notes, r.Unexamined)
	for _, p := range r.Paths {
		ref, notes := k.paths.ref(p.Path, p.Access, dir, home)
		b.path(ref)
		for _, n := range notes {
			b.note(n)
		}
	}
	for _, u := range r.URLs {
		b.url(u)
		b.host(act.HostOnly(u))
	}
	for _, s := range r.Shells {
		applyShell(b, k.analyzeShell(bg, s, dir, home, parsers))
	}
}

// shellAsks answers what the shell analysis asks of the rest of the
// classifier's knowledge (shell.Classifier): the rules for sensitive
// paths and secrets, and the readers of links, addresses and exposure
// that the argument walk uses too.
type shellAsks struct{ k *knowledge }

func (a shellAsks) Path(raw string, access Kind, dir, home string) (PathRef, []string) {
	return a.k.paths.ref(raw, access, dir, home)
}

func (a shellAsks) NotSecret(name string) bool { return a.k.paths.notSecret[name] }

func (a shellAsks) Secrets() *secret.Scanner { return a.k.secrets }

func (a shellAsks) FindSecret(s string) (secret.Match, bool) { return a.k.findSecret(s) }

func (a shellAsks) URLSecrets(u *url.URL) []string { return a.k.urlSecrets(u) }

func (shellAsks) Addresses(s string) ([]Recipient, bool) { return addresses(s) }

func (shellAsks) LinkAction(u *url.URL) (Kind, string) { return linkAction(u) }

func (shellAsks) PublicCommand(name string, argv []string) string { return publicCommand(name, argv) }

func (shellAsks) AdminCommand(argv []string) string { return adminCommand(argv) }
