package server

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/mandate-dev/mandate/internal/openapi"
	"github.com/mandate-dev/mandate/internal/testpeer"
)

// exercised collects the routes and statuses the package's tests provoked
// (and the validator accepted), so TestMain can tell a route no test reaches.
var exercised = &routeSet{seen: map[string]bool{}}

type routeSet struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (s *routeSet) add(pattern string, status int) {
	if status/100 != 2 {
		return
	}
	s.mu.Lock()
	s.seen[pattern] = true
	s.mu.Unlock()
}

var (
	validatorOnce sync.Once
	validator     *openapi.Validator
	validatorErr  error
)

func testValidator(t testing.TB) *openapi.Validator {
	validatorOnce.Do(func() { validator, validatorErr = openapi.NewValidator(Spec(nil), Operations()) })
	if validatorErr != nil {
		t.Fatal(validatorErr)
	}
	return validator
}

// TestMain fails a full run of the package's tests that leaves a route
// without one successful, validated response.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && !testpeer.SkippedSlow() {
		var missing []string
		for _, op := range Operations() {
			p := op.Method + " " + op.Path
			if !exercised.seen[p] {
				missing = append(missing, p)
			}
		}
		slices.Sort(missing)
		if len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: no test of this package got a validated 2xx response from:\n")
			for _, p := range missing {
				fmt.Fprintln(os.Stderr, "  ", p)
			}
			code = 1
		}
	}
	os.Exit(code)
}
