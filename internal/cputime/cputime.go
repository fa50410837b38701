// Package cputime reads the CPU time this process has used (user and
// system, every thread), for benchmarks that report CPU per operation
// rather than wall-clock time: on a shared machine the wall clock measures
// the neighbours as much as the code.
package cputime

import "time"

// Process returns the user and system CPU time the process has used so
// far; ok is false where the platform does not say.
func Process() (user, system time.Duration, ok bool) { return process() }

// Total is user plus system time (0 where unknown).
func Total() time.Duration {
	u, s, _ := process()
	return u + s
}
