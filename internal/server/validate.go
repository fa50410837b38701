package server

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/mandate-dev/mandate/internal/openapi"
)

// ValidateResponses wraps h, a Server, so that every response to a
// documented route is checked against the OpenAPI document (its status,
// content type and body), more strictly than the document says: a body may
// carry no field its type does not declare. report receives each mismatch.
// Tests wrap the servers they start with it, so a handler that answers with
// anything but its route's declared type fails them.
func ValidateResponses(h http.Handler, report func(error)) http.Handler {
	v, err := openapi.NewValidator(Spec(nil), Operations())
	if err != nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			report(fmt.Errorf("the OpenAPI document cannot be built: %w", err))
			h.ServeHTTP(w, r)
		})
	}
	return validating(h, v, report, nil)
}

// validating is ValidateResponses with a validator built once; seen, if
// set, hears of every response that matched.
func validating(h http.Handler, v *openapi.Validator, report func(error), seen func(pattern string, status int)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		pattern := r.Pattern
		if pattern == "" || !strings.Contains(pattern, " ") {
			return // the catch-all 404, or a mounted surface (/mcp)
		}
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		if err := v.Check(pattern, status, rec.Header().Get("Content-Type"), rec.body.Bytes()); err != nil {
			report(fmt.Errorf("%s %s: %w", r.Method, r.URL, err))
		} else if seen != nil {
			seen(pattern, status)
		}
	})
}

// recorder passes a response through and keeps a copy of it.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushing a
// stream of events).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
