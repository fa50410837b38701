package openapi

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
)

// Docs reads types' doc comments from the module's source, for the
// document's descriptions. A package's files are parsed the first time one
// of its types is described.
type Docs struct {
	root, module string

	mu   sync.Mutex
	pkgs map[string]*pkgDocs
	err  error
}

type pkgDocs struct {
	types  map[string]string
	fields map[string]map[string]string
}

// NewDocs reads comments from the module at root (the directory holding
// go.mod) whose path is module.
func NewDocs(root, module string) *Docs {
	return &Docs{root: root, module: module, pkgs: map[string]*pkgDocs{}}
}

// Err is the first error met reading the source; a document built with
// Docs that have an error lacks descriptions.
func (d *Docs) Err() error {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

func (d *Docs) typeDoc(t reflect.Type) string {
	if p := d.pkg(t.PkgPath()); p != nil {
		return p.types[t.Name()]
	}
	return ""
}

func (d *Docs) fieldDoc(owner reflect.Type, f reflect.StructField) string {
	// A promoted field is documented in the struct that declares it.
	t := owner
	for _, i := range f.Index[:len(f.Index)-1] {
		t = t.Field(i).Type
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
	}
	if p := d.pkg(t.PkgPath()); p != nil {
		return p.fields[t.Name()][f.Name]
	}
	return ""
}

func (d *Docs) pkg(path string) *pkgDocs {
	if d == nil || path == "" || (path != d.module && !strings.HasPrefix(path, d.module+"/")) {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if p, ok := d.pkgs[path]; ok {
		return p
	}
	dir := filepath.Join(d.root, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(path, d.module), "/")))
	p, err := parseDocs(dir)
	if err != nil && d.err == nil {
		d.err = err
	}
	d.pkgs[path] = p
	return p
}

func parseDocs(dir string) (*pkgDocs, error) {
	p := &pkgDocs{types: map[string]string{}, fields: map[string]map[string]string{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return p, fmt.Errorf("openapi: doc comments: %w", err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return p, fmt.Errorf("openapi: doc comments: %w", err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				if doc != nil {
					p.types[ts.Name.Name] = text(doc)
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				fields := map[string]string{}
				for _, fl := range st.Fields.List {
					c := fl.Doc
					if c == nil {
						c = fl.Comment
					}
					if c == nil {
						continue
					}
					for _, n := range fl.Names {
						fields[n.Name] = text(c)
					}
					if len(fl.Names) == 0 { // embedded
						fields[embeddedName(fl.Type)] = text(c)
					}
				}
				p.fields[ts.Name.Name] = fields
			}
		}
	}
	return p, nil
}

func embeddedName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return embeddedName(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// text is a comment as one paragraph.
func text(c *ast.CommentGroup) string {
	return strings.Join(strings.Fields(c.Text()), " ")
}
