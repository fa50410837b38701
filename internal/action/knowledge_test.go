package action

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mandate-dev/mandate/internal/datafile"
	"github.com/mandate-dev/mandate/internal/secret"
)

// docBlock returns the first ```yaml block after heading in docs/catalog.md,
// so that the documented example is the tested one.
func docBlock(t *testing.T, heading string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "catalog.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, heading)
	if i < 0 {
		t.Fatalf("docs/catalog.md has no %q", heading)
	}
	s = s[i:]
	j := strings.Index(s, "```yaml\n")
	k := strings.Index(s[j+8:], "```")
	if j < 0 || k < 0 {
		t.Fatalf("no yaml block after %q", heading)
	}
	return s[j+8 : j+8+k]
}

func TestTeachACommandInFiveLines(t *testing.T) {
	block := docBlock(t, "## Teach Mandate a command in five lines")
	if n := strings.Count(strings.TrimSpace(block), "\n") + 1; n > 5 {
		t.Errorf("the example has %d lines", n)
	}
	c, err := NewClassifier(WithCatalogFiles(writeCatalog(t, "mycorp.yaml", block)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cmd  string
		want expect
	}{
		{"mycorp-cli status", expect{kind: Read, readOnly: yes()}},
		{"mycorp-cli logs --tail 50", expect{kind: Read, readOnly: yes()}},
		{"mycorp-cli deploy prod", expect{kind: Send, kinds: []Kind{Execute, Send}, external: yes(), notes: []string{"deploys to production"}}},
		{"sudo mycorp-cli deploy prod", expect{kind: Send, via: []string{"sudo"}}},
		{`bash -c "mycorp-cli deploy prod"`, expect{kind: Send}},
		{"mycorp-cli frobnicate", expect{kind: Execute, readOnly: no()}},
		{"mycorp-cli", expect{kind: Read}},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			tc.want.check(t, c.Classify(Call{Tool: "Bash", Args: map[string]any{"command": tc.cmd}, WorkingDir: testWD, HomeDir: testHome}))
		})
	}
	// Without the file the program is unknown: execute.
	expect{kind: Execute}.check(t, newTestClassifier(t).Classify(Call{Tool: "Bash", Args: map[string]any{"command": "mycorp-cli status"}}))
}

func TestBuiltinKnowledge(t *testing.T) {
	k, err := builtinKnowledge()
	if err != nil {
		t.Fatal(err)
	}
	if n := k.shell.Programs(); n < 550 {
		t.Errorf("%d programs known; the built-in tables lost some", n)
	}
	// Every handler is used by a built-in entry: an unused one is dead
	// code, or an entry that lost it.
	for _, name := range k.shell.UnusedHandlers() {
		t.Errorf("handler %q is used by no built-in command", name)
	}
	if k.code.Patterns() < 60 || len(k.paths.dirs) < 15 || len(k.args.classes) < 200 || len(k.names.vendors) < 60 {
		t.Errorf("built-in knowledge is short: %d code patterns, %d directories, %d argument names, %d vendors",
			k.code.Patterns(), len(k.paths.dirs), len(k.args.classes), len(k.names.vendors))
	}
}

// The built-in command files must not define one program twice: the later
// file would silently win.
func TestBuiltinCommandsNoDuplicates(t *testing.T) {
	srcs, err := builtinSources()
	if err != nil {
		t.Fatal(err)
	}
	owner := map[string]string{}
	for _, src := range srcs {
		var kf knowledgeFile
		if err := datafile.Load(src.name, src.data, &kf); err != nil {
			t.Fatal(err)
		}
		for _, c := range kf.Commands {
			for _, n := range c.Names {
				if prev, ok := owner[n]; ok {
					t.Errorf("program %q is defined in %s and %s:%d", n, prev, src.name, c.Line())
				}
				owner[n] = src.name
			}
		}
	}
}

func TestKnowledgeErrors(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"unknown section", "comands: []\n", `bad.yaml:1: unknown key "comands"`},
		{"command unknown key", "commands:\n  - names: [x]\n    kind: read\n    colour: red\n", `bad.yaml:4: unknown key "colour"`},
		{"command without names", "commands:\n  - kind: read\n", "bad.yaml:2: command without names"},
		{"command bad name", "commands:\n  - names: [my cli]\n    kind: read\n", `bad.yaml:2: command name "my cli"`},
		{"command bad kind", "commands:\n  - names: [x]\n    kind: reed\n", `bad.yaml:3: command x: unknown kind "reed"`},
		{"command nothing", "commands:\n  - names: [x]\n", "bad.yaml:2: command x: give a kind, a handler or subcommands"},
		{"command bad handler", "commands:\n  - names: [x]\n    handler: magic\n", `bad.yaml:3: command x: unknown handler "magic"`},
		{"command bad operands", "commands:\n  - names: [x]\n    kind: read\n    operands: eat\n", `bad.yaml:4: command x: unknown access "eat"`},
		{"handler and subcommands", "commands:\n  - names: [x]\n    handler: rm\n    subcommands: {a: read}\n", "exclusive"},
		{"subcommand word", "commands:\n  - names: [x]\n    subcommands:\n      a: reed\n", `bad.yaml:4: command x: subcommand a: unknown word "reed"`},
		{"subcommand twice", "commands:\n  - names: [x]\n    subcommands:\n      a b: read\n      b: write\n", `bad.yaml:5: subcommand "b" is listed twice`},
		{"subcommand no kind", "commands:\n  - names: [x]\n    subcommands:\n      a: external\n", `"external" names no kind`},
		{"unknown issuer", "commands:\n  - names: [x]\n    subcommands:\n      a: {do: credential, issuer: nobody}\n", `unknown issuer "nobody"`},
		{"verb redefined", "commands:\n  - names: [x]\n    handler: gcloud\n    verbs: {read: [deploy]}\n", `bad.yaml:2: command x: verb "deploy" is the vocabulary's (write, execute)`},
		{"wrapper field", "commands:\n  - names: [x]\n    kind: read\n    subcommand: run\n", "subcommand is for wrappers"},
		{"interpreter field", "commands:\n  - names: [x]\n    handler: rm\n    language: python\n", "are for interpreters"},
		{"action loop", "actions:\n  a: {do: b}\n  b: {do: a}\ncommands:\n  - names: [x]\n    subcommands: {s: a}\n", "defined through itself"},
		{"verb kind", "verbs:\n  sned: [blast]\n", `bad.yaml:2: unknown kind "sned"`},
		{"argument class", "arguments:\n  classes:\n    pth: [x]\n", `bad.yaml:3: unknown argument class "pth"`},
		{"path pattern", "sensitive_paths:\n  patterns:\n    - {name: \"[\", why: x}\n", `bad.yaml:3: bad pattern "["`},
		{"path pattern both", "sensitive_paths:\n  patterns:\n    - {name: a, path: /b, why: x}\n", "either name"},
		{"code pattern", "code:\n  patterns:\n    - {pattern: '(', kind: delete}\n", `bad.yaml:3: code pattern "("`},
		{"code kind", "code:\n  patterns:\n    - {pattern: x, kind: nuke}\n", `bad.yaml:3: code pattern: unknown kind "nuke"`},
		{"code language", "code:\n  patterns:\n    - {pattern: x, kind: delete, languages: [cobol]}\n", `unknown language "cobol"`},
		{"tool code language", "tools:\n  - name: t\n    kind: execute\n    args: {src: \"code:cobol\"}\n", `bad.yaml:4: tool "t": argument "src": unknown code language "cobol"`},
		{"secret detector", "secrets:\n  detectors:\n    - {type: x, anchors: [a], pattern: '('}\n", `bad.yaml:3: detector x: pattern`},
		{"not yaml", "commands: [\n", "bad.yaml:1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewClassifier(WithCatalogFiles(writeCatalog(t, "bad.yaml", tc.body)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestOperatorKnowledge extends every section from one file and checks that
// each addition changes the classification.
func TestOperatorKnowledge(t *testing.T) {
	const file = `
verbs:
  delete: [yeet]
names:
  vendors: {payments: [acme]}
arguments:
  classes: {recipient: [notify_list]}
  recipient_fields: {to: [notify_list]}
sensitive_paths:
  directories: {".mycorp/credentials": "MyCorp CLI credentials"}
  extensions: {".mcsecret": "MyCorp secret bundle"}
code:
  patterns:
    - {pattern: 'nuke\(\)', languages: [python], kind: delete, destructive: true, note: "calls nuke()"}
secrets:
  detectors:
    - {type: mycorp_token, anchors: [mct_], pattern: 'mct_[A-Za-z0-9]{32}\b'}
shell:
  hijack_variables: [MYCORP_PLUGIN]
commands:
  - names: [mywrap]
    handler: wrapper
    flags: {stop: true}
    note: runs under mywrap
  - names: [cat]
    kind: execute
    note: our cat is a deploy script
`
	c, err := NewClassifier(WithCatalogFiles(writeCatalog(t, "ops.yaml", file)))
	if err != nil {
		t.Fatal(err)
	}
	call := func(tool string, args map[string]any) Action {
		return c.Classify(Call{Tool: tool, Args: args, WorkingDir: testWD, HomeDir: testHome})
	}
	bash := func(cmd string) Action { return call("Bash", map[string]any{"command": cmd}) }
	expect{kind: Delete, source: "heuristic"}.check(t, call("yeet_records", map[string]any{"id": "1"}))
	expect{family: "payments"}.check(t, call("acme_list_things", map[string]any{}))
	expect{recipients: []string{"bob@x.org:to"}}.check(t, call("send_digest", map[string]any{"notify_list": "bob@x.org"}))
	expect{sensitive: yes(), paths: []string{"/home/u/.mycorp/credentials/prod:read:sensitive"}}.check(t, call("Read", map[string]any{"file_path": "~/.mycorp/credentials/prod"}))
	expect{sensitive: yes()}.check(t, call("Read", map[string]any{"file_path": "keys.mcsecret"}))
	expect{kinds: []Kind{Delete}, destructive: yes(), notes: []string{"calls nuke()"}}.check(t, bash(`python -c "nuke()"`))
	expect{sensitive: yes()}.check(t, call("post_note", map[string]any{"text": "token mct_" + strings.Repeat("Ab3Z", 8)}))
	expect{kind: Execute, readOnly: no()}.check(t, bash("MYCORP_PLUGIN=x ls"))
	a := bash("mywrap rm -rf build")
	expect{kind: Delete, via: []string{"mywrap"}, notes: []string{"runs under mywrap"}}.check(t, a)
	expect{kind: Execute, notes: []string{"our cat is a deploy script"}}.check(t, bash("cat x"))
	if !slices.ContainsFunc(c.Secrets().Find("mct_"+strings.Repeat("Ab3Z", 8)), func(m secretMatch) bool { return m.Type == "mycorp_token" }) {
		t.Error("the classifier's scanner lacks the operator's detector")
	}
	// The built-in classifier knows none of it.
	expect{kind: Read}.check(t, newTestClassifier(t).Classify(Call{Tool: "Bash", Args: map[string]any{"command": "cat x"}}))
}

type secretMatch = secret.Match

// TestCloudVerbsUseVocabulary: cloud CLIs read their operation verbs with
// the shared vocabulary, so "deploy" names what it names in a tool name and
// in the user's words.
func TestCloudVerbsUseVocabulary(t *testing.T) {
	c := newTestClassifier(t)
	for _, tc := range []struct {
		cmd  string
		want expect
	}{
		{"gcloud app deploy app.yaml", expect{kinds: []Kind{Write, Execute}, external: yes()}},
		{"gcloud compute instances delete web-1 --zone x", expect{kind: Delete, destructive: yes()}},
		{"gcloud compute instances list", expect{kind: Read, readOnly: yes()}},
		{"gcloud container clusters get-iam-policy c", expect{kind: Read}},
		{"az storage blob upload -f x -c c", expect{kinds: []Kind{Write, Send}, external: yes()}},
		{"aws ec2 terminate-instances --instance-ids i-1", expect{kind: Delete, destructive: yes(), notes: []string{"deletes cloud resources"}}},
		{"aws ec2 revoke-security-group-ingress --group-id sg-1 --cidr 0.0.0.0/0", expect{kind: Write, notKinds: []Kind{Delete}}},
		{"aws ec2 describe-instances", expect{kind: Read, readOnly: yes()}},
		{"aws dynamodb batch-write-item --request-items x", expect{kind: Write}},
		{"aws dynamodb batch-get-item --request-items x", expect{kind: Read}},
		{"aws sns publish --message hi --topic-arn x", expect{kind: Send}},
		{"aws ecs run-task --task-definition x", expect{kind: Execute, external: yes()}},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			tc.want.check(t, c.Classify(Call{Tool: "Bash", Args: map[string]any{"command": tc.cmd}, WorkingDir: testWD, HomeDir: testHome}))
		})
	}
}
