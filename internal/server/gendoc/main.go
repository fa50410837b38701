// Command gendoc writes internal/server/openapi.json from the server's
// routes and the wire types of package api, with descriptions from their doc
// comments. Run it with `go generate ./internal/server`.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mandate-dev/mandate/internal/openapi"
	"github.com/mandate-dev/mandate/internal/server"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	docs := openapi.NewDocs(root, "github.com/mandate-dev/mandate")
	b, err := server.OpenAPI(docs)
	if err != nil {
		return err
	}
	if err := docs.Err(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, "internal", "server", "openapi.json"), b, 0o644)
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
