package server

import (
	"bytes"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/mandate-dev/mandate/internal/openapi"
)

var update = flag.Bool("update", false, "rewrite openapi.json")

// TestOpenAPIDocument holds the committed document to what the routes and
// the wire types generate: change either, and run go generate.
func TestOpenAPIDocument(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	docs := openapi.NewDocs(root, "github.com/mandate-dev/mandate")
	got, err := OpenAPI(docs)
	if err != nil {
		t.Fatal(err)
	}
	if err := docs.Err(); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("openapi.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, openAPIDoc) {
		t.Fatal("openapi.json is not what the routes and package api generate: run go generate ./internal/server and commit the result")
	}
}

// TestOpenAPIServed checks the document is served as committed.
func TestOpenAPIServed(t *testing.T) {
	f := newFixture(t)
	resp, err := http.Get(f.srv.URL + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !bytes.Equal(b, openAPIDoc) {
		t.Fatalf("GET /v1/openapi.json: %d, %d bytes; want the committed document", resp.StatusCode, len(b))
	}
}
