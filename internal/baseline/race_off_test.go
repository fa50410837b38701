//go:build !race

package baseline

const raceDetector = false
