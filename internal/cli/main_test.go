package cli

import (
	"context"
	"os"
	"testing"
)

// asMandate makes this test binary act as the mandate binary when it is
// started as a child process — `mandate bench` runs its load generator as
// `<this binary> bench --url …` — instead of running the tests.
const asMandate = "MANDATE_CLI_TEST_AS_MANDATE"

func TestMain(m *testing.M) {
	if os.Getenv(asMandate) == "1" {
		os.Exit(Main(context.Background(), os.Args[1:], Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
	}
	os.Exit(m.Run())
}
