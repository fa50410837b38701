//go:build !unix

package cputime

import "time"

func process() (time.Duration, time.Duration, bool) { return 0, 0, false }
