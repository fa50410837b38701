package action

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"

	"go.yaml.in/yaml/v3"

	"github.com/mandate-dev/mandate/internal/datafile"
	"github.com/mandate-dev/mandate/internal/secret"
	"github.com/mandate-dev/mandate/internal/shell"
	"github.com/mandate-dev/mandate/internal/vocab"
	"github.com/mandate-dev/mandate/policies"
)

// What the classifier knows is data. A knowledge file is YAML with any of
// the sections of knowledgeFile; the built-in files are policies/catalog/
// (the tools) and data/ beside this file (everything else), and an
// operator's --catalog file has the same format, so that teaching Mandate a
// command is the same as teaching it a tool. docs/catalog.md describes
// every section for people.
//
//go:embed data/*.yaml
var dataFS embed.FS

// knowledgeFile is one knowledge file.
type knowledgeFile struct {
	// Tools is the tool catalog (catalog.go). It is kept as a node and
	// compiled by the catalog, which has its own rules for names.
	Tools yaml.Node `yaml:"tools"`
	// The verb vocabulary's sections (verbs, lead_verbs, nouns) extend
	// the verbs tool names are read with.
	vocab.Tables `yaml:",inline"`
	// Names are the other words of tool names: vendors, families,
	// credentials (heuristics.go).
	Names nameSpec `yaml:"names"`
	// Arguments are argument names and what they hold (extract.go).
	Arguments argSpecs `yaml:"arguments"`
	// SensitivePaths are where secrets live (sensitive.go).
	SensitivePaths pathSpec `yaml:"sensitive_paths"`
	// The shell analysis's sections (commands, actions, issuers, shell,
	// code) are package shell's.
	shell.Sections `yaml:",inline"`
	// Secrets are more secret detectors and key names (package secret).
	Secrets secret.Additions `yaml:"secrets"`
}

// knowledge is everything the classifier knows, compiled from the
// knowledge files. It is immutable once built.
type knowledge struct {
	cat     *catalog
	names   *nameWords
	args    *argNames
	paths   *pathRules
	shell   *shell.Knowledge
	code    *shell.CodeRules
	secrets *secret.Scanner
}

// source is a knowledge file's name and content.
type source struct {
	name string
	data []byte
}

// builtinSources are the built-in knowledge files in load order: the tool
// catalog, then the rest, each in name order.
func builtinSources() ([]source, error) {
	var out []source
	for _, d := range []struct {
		fsys fs.FS
		glob string
	}{{policies.FS, "catalog/*.yaml"}, {dataFS, "data/*.yaml"}} {
		names, err := fs.Glob(d.fsys, d.glob)
		if err != nil {
			return nil, fmt.Errorf("list built-in knowledge: %w", err)
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("built-in knowledge %s is empty", d.glob)
		}
		sort.Strings(names)
		for _, n := range names {
			data, err := fs.ReadFile(d.fsys, n)
			if err != nil {
				return nil, fmt.Errorf("read built-in knowledge %s: %w", n, err)
			}
			out = append(out, source{"builtin:" + path.Base(n), data})
		}
	}
	return out, nil
}

// loadKnowledge reads the built-in knowledge files, then each operator
// file in order. A later file adds to what earlier ones said, or replaces
// it entry by entry (a tool, a command, a word of the same name).
func loadKnowledge(files []string) (*knowledge, error) {
	srcs, err := builtinSources()
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("read knowledge file: %w", err)
		}
		srcs = append(srcs, source{f, data})
	}
	v, err := vocab.Builtin()
	if err != nil {
		return nil, err
	}
	k := &knowledge{
		cat:     newCatalog(),
		secrets: secret.Builtin(),
	}
	var (
		names nameSpec
		args  argSpecs
		paths pathSpec
		secs  shell.Sections
	)
	for _, src := range srcs {
		var kf knowledgeFile
		if err := datafile.Load(src.name, src.data, &kf); err != nil {
			return nil, err
		}
		if kf.Tools.Kind != 0 {
			if err := k.cat.add(src.name, &kf.Tools); err != nil {
				return nil, err
			}
		}
		v = v.With(kf.Tables)
		names.merge(&kf.Names)
		args.merge(&kf.Arguments)
		paths.merge(&kf.SensitivePaths)
		secs.Merge(src.name, &kf.Sections)
		k.secrets = k.secrets.With(kf.Secrets)
	}
	k.names = compileNames(v, &names)
	k.args = compileArgs(&args)
	k.paths = compilePaths(&paths)
	if k.code, err = shell.CompileCode(&secs.Code); err != nil {
		return nil, err
	}
	if err := k.cat.checkLanguages(k.code); err != nil {
		return nil, err
	}
	if k.shell, err = shell.Compile(&secs, k.code, k.names.verbs, k.names.lead, shellAsks{k}); err != nil {
		return nil, err
	}
	return k, nil
}
