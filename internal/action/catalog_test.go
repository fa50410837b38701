package action

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/policies"
)

// The built-in catalog must not define one name in two files: the later
// file would silently win.
func TestBuiltinCatalogNoCrossFileDuplicates(t *testing.T) {
	names, err := fs.Glob(policies.FS, "catalog/*.yaml")
	if err != nil || len(names) == 0 {
		t.Fatalf("no catalog files: %v", err)
	}
	owner := map[string]string{}
	for _, n := range names {
		data, err := fs.ReadFile(policies.FS, n)
		if err != nil {
			t.Fatal(err)
		}
		var cf catalogFile
		if err := yaml.Unmarshal(data, &cf); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		for _, e := range cf.Tools {
			scope := strings.Join(e.Servers, ",")
			if e.Builtin {
				scope = "<builtin>"
			}
			for _, name := range append([]string{e.Name}, e.Aliases...) {
				_, sn := NormalizeToolName(name)
				key := sn + "|" + scope
				if prev, ok := owner[key]; ok && prev != n {
					t.Errorf("%q (%s) is defined in %s and %s", name, scope, prev, n)
				}
				owner[key] = n
			}
		}
	}
	if len(owner) < 400 {
		t.Errorf("built-in catalog has only %d names; expected the full families", len(owner))
	}
}

func writeCatalog(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOperatorCatalog(t *testing.T) {
	// The five-line entry from docs/catalog.md.
	p := writeCatalog(t, "ops.yaml", `tools:
  - name: deploy_service
    family: cloud
    kind: execute
    args: {service: account, manifest: "path:read"}
`)
	// A later file overrides a built-in entry and that of an earlier file.
	override := writeCatalog(t, "override.yaml", `tools:
  - name: fetch
    family: web
    kind: send
    note: our fetch proxy posts the page to an archive
  - name: deploy_service
    family: cloud
    kinds: [execute, send]
    external: true
    args: {manifest: "path:read"}
`)
	c, err := NewClassifier(WithCatalogFiles(p, override))
	if err != nil {
		t.Fatal(err)
	}
	a := c.Classify(Call{Tool: "deployService", Args: map[string]any{"service": "billing", "manifest": "k8s/app.yaml"}, WorkingDir: "/w"})
	expect{kind: Send, kinds: []Kind{Execute}, known: yes(), external: yes(), family: "cloud", paths: []string{"/w/k8s/app.yaml:read"}}.check(t, a)
	a = c.Classify(Call{Tool: "mcp__fetch__fetch", Args: map[string]any{"url": "https://x.example"}})
	expect{kind: Send, notes: []string{"archive"}, hosts: []string{"x.example"}}.check(t, a)

	// Without the override, deploy_service is the first file's.
	c, err = NewClassifier(WithCatalogFiles(p))
	if err != nil {
		t.Fatal(err)
	}
	a = c.Classify(Call{Tool: "deploy_service", Args: map[string]any{"service": "billing"}})
	expect{kind: Execute, notKinds: []Kind{Send}}.check(t, a)
}

func TestOperatorCatalogServerScope(t *testing.T) {
	p := writeCatalog(t, "crm.yaml", `tools:
  - name: sync
    servers: [crm]
    family: contacts
    kind: send
    args:
      email: recipient:to
`)
	c, err := NewClassifier(WithCatalogFiles(p))
	if err != nil {
		t.Fatal(err)
	}
	a := c.Classify(Call{Tool: "mcp__crm__sync", Args: map[string]any{"email": "a@b.org"}})
	expect{kind: Send, known: yes(), recipients: []string{"a@b.org:to"}}.check(t, a)
	a = c.Classify(Call{Tool: "crm.sync", Args: map[string]any{}})
	expect{kind: Send, known: yes()}.check(t, a)
	a = c.Classify(Call{Tool: "mcp__other__sync", Args: map[string]any{}})
	expect{known: no()}.check(t, a)
}

func TestCatalogErrors(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string // substrings of the error
	}{
		{"unknown kind", "tools:\n  - name: x\n    kind: sned\n", []string{"bad.yaml:2:", `tool "x"`, `unknown kind "sned"`}},
		{"missing kind", "tools:\n  - name: x\n", []string{"bad.yaml:2:", "missing kind"}},
		{"missing name", "tools:\n  - kind: read\n", []string{"missing name"}},
		{"unknown field", "tools:\n  - name: x\n    kind: read\n    colour: red\n", []string{"bad.yaml", "colour"}},
		{"unknown role", "tools:\n  - name: x\n    kind: read\n    args: {p: pth}\n", []string{`argument "p"`, `unknown role "pth"`}},
		{"bad access", "tools:\n  - name: x\n    kind: read\n    args: {p: \"path:eat\"}\n", []string{`unknown access "eat"`}},
		{"param on wrong role", "tools:\n  - name: x\n    kind: read\n    args: {p: \"url:bcc\"}\n", []string{"takes no parameter"}},
		{"unknown arg field", "tools:\n  - name: x\n    kind: read\n    args:\n      p: {role: path, acess: read}\n", []string{`unknown argument field "acess"`}},
		{"bad currency", "tools:\n  - name: x\n    kind: pay\n    args:\n      a: {role: amount, currency: euros}\n", []string{"not an ISO 4217 code"}},
		{"bad family", "tools:\n  - name: x\n    kind: read\n    family: Mail Stuff\n", []string{"family"}},
		{"when without op", "tools:\n  - name: x\n    kind: read\n    when:\n      - {arg: m, kind: send}\n", []string{"when[0]", "exactly one of"}},
		{"when without effect", "tools:\n  - name: x\n    kind: read\n    when:\n      - {arg: m, equals: post}\n", []string{"has no effect"}},
		{"when bad regexp", "tools:\n  - name: x\n    kind: read\n    when:\n      - {arg: m, matches: '(', kind: send}\n", []string{"matches"}},
		{"duplicate in file", "tools:\n  - name: x\n    kind: read\n  - name: other\n    aliases: [X]\n    kind: send\n", []string{"bad.yaml:4:", `already used by "x"`}},
		{"builtin with servers", "tools:\n  - name: x\n    kind: read\n    builtin: true\n    servers: [a]\n", []string{"exclusive"}},
		{"not yaml", "tools: [\n", []string{"bad.yaml"}},
		{"empty", "", []string{"empty file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeCatalog(t, "bad.yaml", tt.body)
			_, err := NewClassifier(WithCatalogFiles(p))
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	if _, err := NewClassifier(WithCatalogFiles(filepath.Join(t.TempDir(), "missing.yaml"))); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: err = %v", err)
	}
}

func TestClassifierConcurrent(t *testing.T) {
	c := newTestClassifier(t)
	calls := benchCalls()
	done := make(chan Action, 64)
	for i := range 64 {
		go func() {
			done <- c.Classify(calls[i%len(calls)])
		}()
	}
	for range 64 {
		if a := <-done; a.Kind == "" {
			t.Error("empty kind")
		}
	}
}
