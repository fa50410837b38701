package openapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type testInner struct {
	Name string `json:"name"`
}

type testBody struct {
	ID       string            `json:"id"`
	Count    int               `json:"count,omitempty"`
	When     time.Time         `json:"when"`
	Inner    *testInner        `json:"inner"`
	List     []testInner       `json:"list"`
	Raw      json.RawMessage   `json:"raw,omitempty"`
	Bytes    []byte            `json:"bytes,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
	Kind     testKind          `json:"kind,omitempty"`
	Named    json.RawMessage   `json:"named,omitempty" openapi:"testInner"`
	Skipped  string            `json:"-"`
	internal string            //lint:ignore U1000 an unexported field, which encoding/json never writes
}

type testKind string

type testEmbedding struct {
	testInner
	Extra string `json:"extra"`
}

type testError struct {
	Message string `json:"message"`
}

func testOps() []Operation {
	return []Operation{
		{Method: "GET", Path: "/v1/things/{id}", Roles: []string{"user"},
			Responses: []Response{{Status: 200, Body: testBody{}}}, Errors: []int{404}},
		{Method: "POST", Path: "/v1/things", Roles: []string{"admin"}, Request: testInner{},
			Responses: []Response{{Status: 201, Body: testEmbedding{}}, {Status: 201, ContentType: "text/plain"}}},
		{Method: "DELETE", Path: "/v1/things/{id}", Roles: []string{"admin"}, Responses: []Response{{Status: 204}}},
	}
}

func testSpec() Spec {
	return Spec{Title: "t", Version: "1", Error: testError{}, Enums: map[reflect.Type][]string{reflect.TypeFor[testKind](): {"a", "b"}}}
}

func TestBuildDescribesTypesAsEncodingJSONEncodesThem(t *testing.T) {
	d, err := Build(testSpec(), testOps())
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
				Enum       []string                   `json:"enum"`
			} `json:"schemas"`
		} `json:"components"`
		Paths map[string]map[string]struct {
			Security   *[]any `json:"security"`
			Parameters []struct {
				Name, In string
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	body := doc.Components.Schemas["testBody"]
	if got, want := strings.Join(body.Required, ","), "id,when,inner,list"; got != want {
		t.Errorf("required %s, want %s (omitempty fields are optional)", got, want)
	}
	for _, gone := range []string{"Skipped", "internal", "-"} {
		if _, ok := body.Properties[gone]; ok {
			t.Errorf("property %q documented; encoding/json never writes it", gone)
		}
	}
	for prop, want := range map[string]string{
		"when":  `"format":"date-time"`,
		"inner": `"anyOf":[{"$ref":"#/components/schemas/testInner"},{"type":"null"}]`,
		"bytes": `"contentEncoding":"base64"`,
		"kind":  `"$ref":"#/components/schemas/testKind"`,
		"named": `"$ref":"#/components/schemas/testInner"`,
		"raw":   `true`, // any JSON value
	} {
		var buf bytes.Buffer
		json.Compact(&buf, body.Properties[prop])
		if got := buf.String(); !strings.Contains(got, want) {
			t.Errorf("%s: %s, want it to contain %s", prop, got, want)
		}
	}
	if got := doc.Components.Schemas["testKind"].Enum; len(got) != 2 {
		t.Errorf("testKind enum %v", got)
	}
	emb := doc.Components.Schemas["testEmbedding"]
	if _, ok := emb.Properties["name"]; !ok || len(emb.Properties) != 2 {
		t.Errorf("embedded struct's fields are not promoted: %v", emb.Properties)
	}
	if p := doc.Paths["/v1/things/{id}"]["get"].Parameters; len(p) != 1 || p[0].Name != "id" || p[0].In != "path" {
		t.Errorf("path parameter: %+v", p)
	}
}

func TestBuildRefuses(t *testing.T) {
	type other struct{ C chan int }
	for name, ops := range map[string][]Operation{
		"a channel":     {{Method: "GET", Path: "/x", Responses: []Response{{Status: 200, Body: other{}}}}},
		"a route twice": {{Method: "GET", Path: "/x", Responses: []Response{{Status: 204}}}, {Method: "GET", Path: "/x", Responses: []Response{{Status: 204}}}},
		"no responses":  {{Method: "GET", Path: "/x"}},
		"unknown tagged": {{Method: "GET", Path: "/x", Responses: []Response{{Status: 200, Body: struct {
			A json.RawMessage `openapi:"Nope"`
		}{}}}}},
	} {
		if _, err := Build(testSpec(), ops); err == nil {
			t.Errorf("%s: built", name)
		}
	}
}

func TestValidatorCheck(t *testing.T) {
	v, err := NewValidator(testSpec(), testOps())
	if err != nil {
		t.Fatal(err)
	}
	ok := `{"id":"1","when":"2026-01-01T00:00:00Z","inner":null,"list":[{"name":"a"}],"kind":"a"}`
	for _, c := range []struct {
		name, pattern string
		status        int
		ct, body      string
		wantErr       string
	}{
		{"valid", "GET /v1/things/{id}", 200, "application/json", ok, ""},
		{"an error body", "GET /v1/things/{id}", 404, "application/json", `{"message":"no"}`, ""},
		{"no body", "DELETE /v1/things/{id}", 204, "", "", ""},
		{"text alternative", "POST /v1/things", 201, "text/plain; charset=utf-8", "hello", ""},
		{"undocumented field", "GET /v1/things/{id}", 200, "application/json", strings.Replace(ok, `"id":"1"`, `"id":"1","extra":true`, 1), "extra"},
		{"missing required", "GET /v1/things/{id}", 200, "application/json", strings.Replace(ok, `"id":"1",`, ``, 1), "id"},
		{"wrong type", "GET /v1/things/{id}", 200, "application/json", strings.Replace(ok, `"id":"1"`, `"id":1`, 1), "id"},
		{"not in the enum", "GET /v1/things/{id}", 200, "application/json", strings.Replace(ok, `"kind":"a"`, `"kind":"z"`, 1), "kind"},
		{"undocumented status", "GET /v1/things/{id}", 500, "application/json", `{"message":"x"}`, "500"},
		{"undocumented route", "GET /nope", 200, "application/json", `{}`, "not in the OpenAPI document"},
		{"wrong content type", "GET /v1/things/{id}", 200, "text/html", ok, "content type"},
		{"a body where none is", "DELETE /v1/things/{id}", 204, "application/json", `{}`, "content type"},
	} {
		err := v.Check(c.pattern, c.status, c.ct, []byte(c.body))
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.wantErr)
		}
	}
}
