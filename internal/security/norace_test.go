//go:build !race

package security

// raceDetector: see race_test.go.
const raceDetector = false
