//go:build race

package security

// raceDetector is true in a build with the race detector, which slows the
// whole pipeline five to twenty times: wall-clock bounds are then not
// checked there, and .ci/run checks them in a run without it.
const raceDetector = true
