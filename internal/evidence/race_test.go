//go:build race

package evidence_test

// raceEnabled is true when the race detector (which slows everything
// about tenfold) is on.
const raceEnabled = true
